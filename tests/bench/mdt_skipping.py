#!/usr/bin/env python3
"""Metadata-table data skipping, measured: for a few selective queries on a big table, print
files / requests / bytes / wall time side by side for

  (a) hudi-edge, planning with the metadata table and skipping with its indexes,
  (b) hudi-edge --no-data-skipping (files still from the metadata table; Parquet footers prune),
  (c) the PyPI `hudi` package 0.5.0 (hudi-rs) with the same filters,

plus the ratios, and the "physical limit" of each query: the bytes of the metadata-table
files the plan had to consult + the column chunks (all columns: the queries select `*`) of
the row groups of the files that hold matching rows, against what (a) fetched.

    tests/bench/mdt_skipping.py [TABLE] [--latency-ms 20] [--repeat 3]
                                [--query "col op value [and col op value ...]" ...]

TABLE defaults to ${HUDI_EDGE_CACHE:-~/.cache/hudi-edge}/tables/bench_cow_v9 (written by
tests/spark/make_bench_tables.py); without it, the biggest `*_meta` fixture is used.
tables/hudi_rs_bench_cow_v9 is the same data written by hudi-rs 0.6 (tests/bench/make_hudi_rs_bench.sh),
whose metadata table has zero HFile checksums and hudi-rs' record-index sharding. Not part of
the default test run.

How requests are counted:
  hudi-edge  its own storage counters (`read --stats`: every get / get_range / head / list).
  hudi-rs    `strace` on the local file store: every openat() of a file or directory under
             the table (object_store's local store opens the file for each get / ranged get,
             and each directory it lists) is one request; bytes are read()/pread64() bytes
             from those files. Wall time is measured in a separate run without strace.
With --latency-ms N, hudi-edge runs with `--latency-ms N` (a storage wrapper that delays every
request); hudi-rs reads a local store and cannot be delayed, so its row shows the serial
bound `wall + requests x N ms` instead.

`rounds` are hudi-edge's dependent round trips from `open` to the last row (its counters:
a request starting while none is in flight starts a round trip). They only show under
latency, so without --latency-ms they come from one more run at 20 ms per request. hudi-rs
reads its local store one request after another: its rounds are its requests.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("HUDI_EDGE_CACHE", Path.home() / ".cache" / "hudi-edge"))
VENV = CACHE / "venv"
HUDI_RS = "hudi==0.5.0"

BENCH_QUERIES = [
    ["id = 500000"],
    ["event_date = 2024-06-11"],
    ["event_ts >= 2024-09-01T00:00:00Z", "event_ts < 2024-09-01T06:00:00Z"],
    ["region = us-east", "id >= 100000", "id < 110000"],
    ["amount > 99990"],
]
FIXTURE_QUERIES = [
    ["txn_id = TXN-013"],
    ["txn_date = 2024-01-21"],
    ["amount > 4000"],
]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


# --- setup ----------------------------------------------------------------------------------

def pick_table(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    bench = CACHE / "tables" / "bench_cow_v9"
    if (bench / ".hoodie").is_dir():
        return bench
    zips = sorted((REPO / "tests/data/fixtures/tables").rglob("*_meta.zip"), key=lambda p: p.stat().st_size)
    biggest = zips[-1]
    dest = CACHE / "fixtures" / biggest.stem
    if not dest.is_dir():
        with zipfile.ZipFile(biggest) as z:
            z.extractall(dest.parent)
    print(f"note: {bench} is missing; using the biggest fixture {biggest.name}", file=sys.stderr)
    return dest


def build_hudi_edge() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    env = dict(os.environ, CARGO_PROFILE_RELEASE_LTO="false", CARGO_PROFILE_RELEASE_CODEGEN_UNITS="16")
    sh(["cargo", "build", "--release", "--bin", "hudi-edge", "--quiet"], cwd=REPO, env=env)
    return target / "release" / "hudi-edge"


def venv_python() -> Path:
    py = VENV / "bin" / "python"
    probe = "import hudi, pyarrow; assert hudi.__version__ == '0.5.0'"
    if py.exists() and subprocess.run([py, "-c", probe], capture_output=True).returncode == 0:
        return py
    sh([sys.executable, "-m", "venv", str(VENV)])
    sh([py, "-m", "pip", "install", "--quiet", HUDI_RS, "pyarrow"])
    return py


# --- runners --------------------------------------------------------------------------------

ROUNDS_LATENCY_MS = 20


def edge(bin_: Path, table: Path, filters, extra=(), latency=0, out=subprocess.DEVNULL):
    cmd = [str(bin_), "read", str(table), "--stats"]
    for f in filters:
        cmd += ["--filter", f]
    if latency:
        cmd += ["--latency-ms", str(latency)]
    cmd += list(extra)
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"hudi-edge failed: {' '.join(cmd)}\n{p.stderr}")
    report = json.loads(p.stderr.strip().splitlines()[-1])
    plan, read, stats = report["plan_io"], report["read_io"], report["stats"]
    rounds = report["total_io"]["round_trips"]
    if not latency:
        rounds = edge(bin_, table, filters, extra, ROUNDS_LATENCY_MS)["rounds"]
    return {
        "rounds": rounds,
        "rows": report["rows"],
        "files": stats["files_selected"],
        "requests": plan["requests"] + read["requests"],
        "bytes": plan["bytes"] + read["bytes"],
        "plan_bytes": plan["bytes"],
        "wall": wall,
        "notes": stats["planning_notes"],
    }


HUDI_RS_READ = r"""
import json, sys
from hudi import HudiTableBuilder, HudiReadOptions
table = HudiTableBuilder.from_base_uri(sys.argv[1]).build()
filters = [tuple(f) for f in json.loads(sys.argv[2])]
opts = HudiReadOptions(filters=filters)
files = sum(1 + len(s.log_files_relative_paths()) if hasattr(s, "log_files_relative_paths") else 1
            for s in table.get_file_slices(opts))
rows = sum(b.num_rows for b in table.read(opts))
print(json.dumps({"rows": rows, "files": files}))
"""


def split_filter(f: str):
    m = re.match(r"^\s*(\S+)\s+(>=|<=|!=|=|<|>)\s+(.+?)\s*$", f)
    if not m:
        raise SystemExit(f"cannot hand {f!r} to hudi-rs (col op value)")
    return [m.group(1), m.group(2), m.group(3)]


def hudi_rs(py: Path, table: Path, filters, trace: bool):
    args = [str(py), "-c", HUDI_RS_READ, str(table), json.dumps([split_filter(f) for f in filters])]
    if not trace:
        t = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
        return dict(json.loads(p.stdout.strip().splitlines()[-1]), wall=wall)
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "trace"
        cmd = ["strace", "-f", "-qq", "-y", "-e", "trace=openat,read,pread64", "-o", str(log)] + args
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": "failed under strace"}
        return count_trace(log.read_text(errors="replace"), str(table.resolve()))


def count_trace(text: str, root: str):
    opens = re.compile(r'openat\([^,]+, "([^"]+)", ([^)]*)\) = \d+')
    reads = re.compile(r'(?:read|pread64)\(\d+<([^>]+)>, .*\) = (\d+)$')
    requests = lists = nbytes = 0
    for line in text.splitlines():
        m = opens.search(line)
        if m and m.group(1).startswith(root):
            requests += 1
            lists += "O_DIRECTORY" in m.group(2)
            continue
        m = reads.search(line)
        if m and m.group(1).startswith(root):
            nbytes += int(m.group(2))
    return {"requests": requests, "rounds": requests, "lists": lists, "bytes": nbytes}


# --- physical limit -------------------------------------------------------------------------

def physical_limit(py: Path, bin_: Path, table: Path, filters, latency_free_plan_bytes: int):
    """Needed column chunks of the files holding matching rows (from their footers), plus the
    bytes hudi-edge read from `.hoodie/metadata` for the plan (strace), which is what the
    metadata-table formats require: whole inline HFiles of log blocks, and HFile index + data
    blocks of base files (a 64 KiB tail read may over-read the latter)."""
    with tempfile.TemporaryDirectory() as d:
        rows_path = Path(d) / "rows.jsonl"
        with open(rows_path, "w") as out:
            edge(bin_, table, filters, extra=["--columns", "_hoodie_partition_path,_hoodie_file_name"], out=out)
        files = set()
        for line in rows_path.read_text().splitlines():
            r = json.loads(line)
            files.add((r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0]))
        chunk_script = r"""
import json, sys, os, pyarrow.parquet as pq
root, groups = sys.argv[1], json.loads(sys.argv[2])
total = 0
for part, fid in groups:
    d = os.path.join(root, part)
    names = sorted(n for n in os.listdir(d) if n.startswith(fid) and n.endswith(".parquet"))
    if not names:
        continue
    md = pq.ParquetFile(os.path.join(d, names[-1])).metadata  # latest version of the group
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        total += sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
print(total)
"""
        chunks = int(sh([str(py), "-c", chunk_script, str(table), json.dumps(sorted(files))],
                        capture_output=True).stdout.strip() or 0)
        log = Path(d) / "trace"
        cmd = ["strace", "-f", "-qq", "-y", "-e", "trace=read,pread64", "-o", str(log),
               str(bin_), "plan", str(table)]
        for f in filters:
            cmd += ["--filter", f]
        subprocess.run(cmd, capture_output=True)
        mdt = count_trace(log.read_text(errors="replace"), str(table.resolve() / ".hoodie/metadata"))["bytes"]
    return {"matching_files": len(files), "chunks": chunks, "mdt": mdt, "limit": chunks + mdt}


# --- report ---------------------------------------------------------------------------------

def fmt_bytes(n):
    for unit in ["B", "KB", "MB", "GB"]:
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def ratio(a, b):
    return f"{a / b:.1f}x" if b else "-"


def median_run(fn, repeat):
    runs = [fn() for _ in range(repeat)]
    best = runs[0]
    best["wall"] = statistics.median(r["wall"] for r in runs)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", nargs="?")
    ap.add_argument("--latency-ms", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--query", action="append", help='filters joined with " and "')
    ap.add_argument("--bin", help="a built hudi-edge binary (default: cargo build --release)")
    ap.add_argument("--skip-hudi-rs", action="store_true")
    ap.add_argument("--json", help="also write every query's rows and limit to this file")
    a = ap.parse_args()

    table = pick_table(a.table)
    bin_ = Path(a.bin) if a.bin else build_hudi_edge()
    py = venv_python()
    # bench_cow_v9 and its hudi-rs-written twin hudi_rs_bench_cow_v9 (make_hudi_rs_bench.sh).
    is_bench = (table / ".hoodie").is_dir() and "bench_" in table.name
    queries = [q.split(" and ") for q in a.query] if a.query else (BENCH_QUERIES if is_bench else FIXTURE_QUERIES)
    lat = a.latency_ms
    results = []

    print(f"table: {table}")
    print(f"hudi-edge: {bin_}   hudi-rs: PyPI {HUDI_RS}   repeat: {a.repeat} (median wall)"
          + (f"   latency: {lat} ms per request (hudi-edge)" if lat else ""))
    print()
    head = f"{'':22} {'rows':>6} {'files':>6} {'requests':>9} {'rounds':>7} {'bytes':>10} {'wall s':>8}"
    for q in queries:
        title = " and ".join(q)
        print(f"## {title}")
        print(head)
        a_ = median_run(lambda: edge(bin_, table, q, latency=lat), a.repeat)
        b_ = median_run(lambda: edge(bin_, table, q, extra=["--no-data-skipping"], latency=lat), a.repeat)
        rows = [("(a) edge + MDT skip", a_), ("(b) edge no-skipping", b_)]
        c_ = None
        if not a.skip_hudi_rs:
            c_ = median_run(lambda: hudi_rs(py, table, q, trace=False), a.repeat) if True else None
            if "error" not in c_:
                c_.update(hudi_rs(py, table, q, trace=True))
                if lat:
                    c_["wall"] += c_["requests"] * lat / 1000
            rows.append(("(c) hudi-rs 0.5.0" + (" bound" if lat else ""), c_))
        for name, r in rows:
            if "error" in r:
                print(f"{name:22} error: {r['error']}")
                continue
            print(f"{name:22} {r['rows']:>6} {r['files']:>6} {r['requests']:>9} {r['rounds']:>7}"
                  f" {fmt_bytes(r['bytes']):>10} {r['wall']:>8.2f}")
        print(f"{'b/a':22} {'':>6} {ratio(b_['files'], a_['files']):>6} {ratio(b_['requests'], a_['requests']):>9}"
              f" {ratio(b_['rounds'], a_['rounds']):>7} {ratio(b_['bytes'], a_['bytes']):>10} {ratio(b_['wall'], a_['wall']):>8}")
        if c_ and "error" not in c_:
            print(f"{'c/a':22} {'':>6} {ratio(c_['files'], a_['files']):>6} {ratio(c_['requests'], a_['requests']):>9}"
                  f" {ratio(c_['rounds'], a_['rounds']):>7} {ratio(c_['bytes'], a_['bytes']):>10} {ratio(c_['wall'], a_['wall']):>8}")
        if a_["rows"] != b_["rows"] or (c_ and "error" not in c_ and c_["rows"] != a_["rows"]):
            print("!! row counts differ")
        lim = physical_limit(py, bin_, table, q, a_["plan_bytes"])
        print(f"physical limit: {fmt_bytes(lim['limit'])} = metadata table {fmt_bytes(lim['mdt'])} + column chunks "
              f"{fmt_bytes(lim['chunks'])} of {lim['matching_files']} file(s) with matching rows; (a) fetched "
              f"{fmt_bytes(a_['bytes'])} ({a_['bytes'] / lim['limit']:.2f}x of the limit)")
        for n in a_["notes"][1:]:
            print(f"   - {n}")
        print()
        results.append({"query": title, "edge": a_, "edge_no_skipping": b_, "hudi_rs": c_, "limit": lim})
    if a.json:
        Path(a.json).write_text(json.dumps({"table": str(table), "latency_ms": lat, "queries": results}, indent=1))


if __name__ == "__main__":
    main()
