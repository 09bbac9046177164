#!/usr/bin/env python3
"""SQL beside hudi-rs's DataFusion provider and Spark SQL, on the same table in the same run:
a point lookup, a 1 % range aggregate, a full GROUP BY, and a whole-table COUNT / MIN / MAX
(which statistics can answer); wall time, requests, bytes, and whether the answers agree.

    tests/bench/sql.py [TABLE] [--repeat 3] [--no-spark] [--bin PATH]

TABLE defaults to ${HUDI_EDGE_CACHE:-~/.cache/hudi-edge}/tables/bench_cow_v9
(tests/spark/make_bench_tables.py).

  hudi-edge  `hudi-edge sql --stats` (a release build with `--features datafusion`, or --bin),
             one process per query; requests and bytes from its storage counters.
  hudi-rs    PyPI `hudi` 0.5.0's HudiDataFusionDataSource in datafusion-python 54.1 (the
             `hudi[datafusion]` extra .ci/setup installs), one process per query; requests
             and bytes counted with strace as tests/bench/mdt_skipping.py counts them (in a
             separate run from the timed ones).
  Spark SQL  Hudi 1.1.1, every query --repeat times in one JVM (`tests/spark/run.sh`, under
             flock /tmp/spark.lock); the first run of each query is cold, the median is shown;
             JVM start and the view's creation are not counted; requests are not counted.
Wall times are medians of --repeat runs.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mdt_skipping import REPO, count_trace, fmt_bytes, pick_table, ratio, venv_python  # noqa: E402

QUERIES = [
    ("point lookup", "SELECT * FROM t WHERE id = 500123"),
    ("1 % range aggregate",
     "SELECT category, count(*) AS n, sum(amount) AS total FROM t "
     "WHERE id BETWEEN 400000 AND 409999 GROUP BY category"),
    ("full GROUP BY", "SELECT category, count(*) AS n, sum(amount) AS total FROM t GROUP BY category"),
    ("COUNT / MIN / MAX of the table", "SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM t"),
]

HUDI_RS_SQL = r"""
import json, sys
from datafusion import SessionContext
from hudi import HudiDataFusionDataSource
ctx = SessionContext()
ctx.register_table("t", HudiDataFusionDataSource(sys.argv[1]))
rows = [r for b in ctx.sql(sys.argv[2]).collect() for r in b.to_pylist()]
print(json.dumps(sorted(json.dumps([str(v) for v in r.values()], sort_keys=True) for r in rows)))
"""


def build_hudi_edge() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    env = dict(os.environ, CARGO_PROFILE_RELEASE_LTO="false", CARGO_PROFILE_RELEASE_CODEGEN_UNITS="16")
    subprocess.run(["cargo", "build", "--release", "--features", "datafusion", "--bin", "hudi-edge",
                    "--quiet"], cwd=REPO, env=env, check=True)
    return target / "release" / "hudi-edge"


def edge(bin_: Path, table: Path, sql: str):
    cmd = [str(bin_), "sql", sql, "--table", f"t={table}", "--format", "csv", "--stats"]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"hudi-edge failed: {' '.join(cmd)}\n{p.stderr}")
    report = json.loads(p.stderr.strip().splitlines()[-1])
    io = report["tables"][0]["io"]
    lines = p.stdout.strip().splitlines()[1:]
    rows = sorted(json.dumps(row) for row in csv.reader(lines))
    return {"wall": wall, "requests": io["requests"], "bytes": io["bytes"], "rows": rows,
            "slices": [s["stats"]["slices_selected"] for s in report["tables"][0]["scans"]]}


def hudi_rs(py: Path, table: Path, sql: str, trace: bool):
    args = [str(py), "-c", HUDI_RS_SQL, str(table), sql]
    if not trace:
        t = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            raise SystemExit(f"hudi-rs failed: {p.stderr}")
        return {"wall": wall, "rows": json.loads(p.stdout.strip().splitlines()[-1])}
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "trace"
        cmd = ["strace", "-f", "-qq", "-y", "-e", "trace=openat,read,pread64", "-o", str(log)] + args
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        return count_trace(log.read_text(errors="replace"), str(table.resolve()))


def spark(table: Path, repeat: int):
    cmd = ["flock", "/tmp/spark.lock", str(REPO / "tests/spark/run.sh"), str(REPO / "tests/bench/sql_spark.py"),
           str(table), str(repeat)] + [q for _, q in QUERIES]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"Spark failed:\n{p.stderr[-2000:]}")
    # Spark's JOL warnings share stdout.
    out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith('{"sql"')]
    return {o["sql"]: o for o in out}


NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
TIMESTAMP = re.compile(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.0*)?(Z|\+00:00)?$")


def numbers(rows):
    """Rows as one rendering: numbers as numbers (decimal scales differ by engine), UTC
    timestamps as `date time`, booleans in lower case."""
    def norm(v):
        if NUMBER.match(v):
            return round(float(v), 6)
        if m := TIMESTAMP.match(v):
            return f"{m.group(1)} {m.group(2)}"
        return v.lower() if v in ("True", "False") else v
    return sorted(json.dumps([norm(v) for v in json.loads(r)]) for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", nargs="?")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--bin")
    args = ap.parse_args()
    table = pick_table(args.table)
    bin_ = Path(args.bin) if args.bin else build_hudi_edge()
    py = venv_python()
    if subprocess.run([py, "-c", "import datafusion"], capture_output=True).returncode != 0:
        raise SystemExit("datafusion-python is missing from the venv: run .ci/setup")
    sp = {} if args.no_spark else spark(table, args.repeat)
    print(f"table: {table}\n")
    print("| query | engine | wall (median) | requests | bytes | same rows as Spark |")
    print("|---|---|---:|---:|---:|---|")
    for name, sql in QUERIES:
        e_runs = [edge(bin_, table, sql) for _ in range(args.repeat)]
        h_runs = [hudi_rs(py, table, sql, False) for _ in range(args.repeat)]
        h_io = hudi_rs(py, table, sql, True)
        e, h = e_runs[0], h_runs[0]
        e_wall = statistics.median(r["wall"] for r in e_runs)
        h_wall = statistics.median(r["wall"] for r in h_runs)
        s = sp.get(sql)
        want = numbers(s["rows"]) if s else None
        same = lambda rows: "-" if want is None else ("yes" if numbers(rows) == want else "NO")  # noqa: E731
        print(f"| {name} | hudi-edge (slices {e['slices']}) | {e_wall:.2f} s | {e['requests']} | "
              f"{fmt_bytes(e['bytes'])} | {same(e['rows'])} |")
        print(f"| | hudi-rs DataFusion | {h_wall:.2f} s ({ratio(h_wall, e_wall)}) | {h_io['requests']} | "
              f"{fmt_bytes(h_io['bytes'])} | {same(h['rows'])} |")
        if s:
            print(f"| | Spark SQL (ms per run: {s['ms']}) | {statistics.median(s['ms']) / 1000:.2f} s | - | - | |")


if __name__ == "__main__":
    main()
