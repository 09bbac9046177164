#!/usr/bin/env python3
"""Sustained ingest: many small commits into a 100k-row table, and what they do to writes,
reads and storage (tests/bench/sustained.sh runs it; stdlib only).

    python3 tests/bench/sustained.py BIN WORKDIR --type mor|cow --commits N [--checkpoints 50,250,...]
        [--option KEY=VALUE]... [--spark-check]

The table is created by the CLI with a metadata table and record index, and 100,000 rows
inserted in one commit. Each later commit upserts 100 rows: 50 updates of existing keys spread
over the table and 50 new keys. At each checkpoint it records: write wall time (median of the
last 10 commits on local files, and one commit at 20 ms per storage request), a full scan and a
point lookup at 20 ms per request (requests, round trips, bytes, wall time), file groups,
files and bytes on storage, files in .hoodie/timeline (and the metadata table's).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

REGIONS = ["ap", "eu", "us", "sa", "af"]


def row(i, ts):
    return {"id": f"K{i:07d}", "ts": ts, "region": REGIONS[i % len(REGIONS)], "v": float(i % 1000) / 7.0,
            "note": f"n{ts}"}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    return p


def storage(table):
    files = size = 0
    for d, _, names in os.walk(table):
        for n in names:
            if n.endswith(".crc"):
                continue
            files += 1
            size += os.path.getsize(os.path.join(d, n))
    return files, size


def count_files(d):
    return sum(1 for n in os.listdir(d) if os.path.isfile(os.path.join(d, n))) if os.path.isdir(d) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("work")
    ap.add_argument("--type", default="mor")
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--checkpoints", default="50,250,500,1000")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--option", action="append", default=[])
    a = ap.parse_args()
    rnd = random.Random(7)
    table = os.path.join(a.work, f"sustained_{a.type}")
    run(["rm", "-rf", table])
    opts = []
    for o in a.option:
        opts += ["--option", o]
    run([a.bin, "create", table, "--type", a.type, "--columns",
         "id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE, note STRING",
         "--record-key", "id", "--partition-by", "region", "--ordering", "ts",
         "--option", "hoodie.metadata.record.index.enable=true"])
    inp = os.path.join(a.work, f"in_{a.type}.jsonl")
    with open(inp, "w") as f:
        for i in range(a.rows):
            f.write(json.dumps(row(i, 0)) + "\n")
    t0 = time.time()
    run([a.bin, "write", table, "--input", inp, "--operation", "insert"] + opts)
    print(f"# {a.type}: {a.rows} rows inserted in {time.time() - t0:.1f} s", flush=True)
    next_key = a.rows
    checkpoints = sorted(int(c) for c in a.checkpoints.split(",") if int(c) <= a.commits)
    walls, services = [], {}
    results = []
    for n in range(1, a.commits + 1):
        with open(inp, "w") as f:
            for i in rnd.sample(range(next_key), 50):
                f.write(json.dumps(row(i, n)) + "\n")
            for i in range(next_key, next_key + 50):
                f.write(json.dumps(row(i, n)) + "\n")
        next_key += 50
        t0 = time.time()
        out = run([a.bin, "write", table, "--input", inp, "--json"] + opts).stdout
        walls.append(time.time() - t0)
        done = json.loads(out)
        ran = done.get("services", {})
        for k in ("clean", "archival", "compaction"):
            if ran.get(k):
                services[k] = services.get(k, 0) + 1
        if ran.get("errors"):
            sys.exit(f"commit {n}: service errors {ran['errors']}")
        if n in checkpoints:
            results.append(measure(a, table, n, walls, next_key, rnd, inp, opts))
            print(json.dumps(results[-1]), flush=True)
    print(f"# services that ran after commits: {json.dumps(services)}")
    first, last = results[0], results[-1]
    print(f"\n| {a.type} | " + " | ".join(f"commit {r['commit']}" for r in results) + f" | {last['commit']} / {first['commit']} |")
    print("|---|" + "---:|" * (len(results) + 1))
    for key in results[0]:
        if key == "commit":
            continue
        vals = [r[key] for r in results]
        ratio = (vals[-1] / vals[0]) if vals[0] else float("nan")
        fmt = (lambda v: f"{v:,.3f}") if isinstance(vals[0], float) else (lambda v: f"{v:,}")
        print(f"| {key} | " + " | ".join(fmt(v) for v in vals) + f" | {ratio:.2f}× |")


def stats_of(a, table, extra):
    t0 = time.time()
    p = run([a.bin, "--latency-ms", "20", "read", table, "--stats", "--format", "jsonl"] + extra)
    wall = time.time() - t0
    s = json.loads(p.stderr.strip().splitlines()[-1])
    return s, wall, sum(1 for _ in p.stdout.splitlines())


def measure(a, table, n, walls, next_key, rnd, inp, opts):
    # One commit at 20 ms per request.
    with open(inp, "w") as f:
        for i in rnd.sample(range(next_key), 50):
            f.write(json.dumps(row(i, n)) + "\n")
    t0 = time.time()
    run([a.bin, "--latency-ms", "20", "write", table, "--input", inp] + opts)
    remote_write = time.time() - t0
    full, full_wall, rows = stats_of(a, table, [])
    key = f"K{rnd.randrange(next_key):07d}"
    point, point_wall, _ = stats_of(a, table, ["--filter", f"id = {key}"])
    groups = json.loads(run([a.bin, "file-groups", table, "--json"]).stdout)["groups"]
    files, size = storage(table)
    return {
        "commit": n,
        "rows": rows,
        "write_s_median_local": round(statistics.median(walls[-10:]), 3),
        "write_s_at_20ms": round(remote_write, 3),
        "scan_requests": full["total_io"]["requests"],
        "scan_round_trips": full["total_io"]["round_trips"],
        "scan_bytes": full["total_io"]["bytes"],
        "scan_s_at_20ms": round(full_wall, 3),
        "lookup_requests": point["total_io"]["requests"],
        "lookup_round_trips": point["total_io"]["round_trips"],
        "file_groups": len(groups),
        "files_on_storage": files,
        "bytes_on_storage": size,
        "timeline_files": count_files(os.path.join(table, ".hoodie", "timeline")),
        "mdt_timeline_files": count_files(os.path.join(table, ".hoodie", "metadata", ".hoodie", "timeline")),
    }


if __name__ == "__main__":
    main()
