#!/usr/bin/env bash
# What a table's health report costs on the 1M-row bench tables (bench_cow_v9, bench_mor_v9 of
# tests/spark/make_bench_tables.py, 8 partitions each): `hudi-edge health --json --stats` on
# each, from local files, from local files with 20 ms added to every request (`--latency-ms`),
# and from moto's S3 on loopback with the same 20 ms (its access log counts the requests too).
# Per table and store: requests in all (the open and the report) and per partition, by
# purpose, bytes, data blocks read (footers, column chunks, log blocks, metadata-table blocks:
# the report reads none), dependent round trips and the wall time of the process (median of
# RUNS); written to tests/bench/results/health_cost.md. Target: at most 10 requests per
# partition, no data block read.
#
#   tests/bench/health_cost.sh [--runs 3] [--latency-ms 20] [--debug] [--no-s3]
#
# HUDI_EDGE_BENCH_COW / HUDI_EDGE_BENCH_MOR name other tables; HUDI_EDGE_BIN=path uses that
# CLI instead of building one (requests, bytes and round trips do not depend on the build,
# times do). The report's clock is the machine's: write activity reads the commit metadata of
# the last week's commits (at most 100), so a table written more than a week ago costs less.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
py="$cache/venv/bin/python"
runs=3 latency=20 profile=release s3=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --latency-ms) latency=$2; shift 2 ;;
    --debug) profile=debug; shift ;;
    --no-s3) s3=0; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
cow="${HUDI_EDGE_BENCH_COW:-$cache/tables/bench_cow_v9}"
mor="${HUDI_EDGE_BENCH_MOR:-$cache/tables/bench_mor_v9}"
for t in "$cow" "$mor"; do
  [ -f "$t/.hoodie/hoodie.properties" ] || { echo "$t: no table (tests/spark/make_bench_tables.py)" >&2; exit 1; }
done
target="${CARGO_TARGET_DIR:-target}"
if [ -n "${HUDI_EDGE_BIN:-}" ]; then
  bin="$HUDI_EDGE_BIN"; build="CLI $HUDI_EDGE_BIN (given)"
else
  if [ "$profile" = release ]; then cargo build -q --release --bin hudi-edge; else cargo build -q --bin hudi-edge; fi
  bin="$target/$profile/hudi-edge"; build="$profile CLI"
fi
out=tests/bench/results/health_cost.md
work=$(mktemp -d "${TMPDIR:-/tmp}/health-cost.XXXXXX")
moto_pid=
cleanup() { [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# Each store as `NAME|CLI flags before the command|URL of the COW table|URL of the MOR table`.
stores=("local||$cow|$mor" "local, $latency ms per request|--latency-ms $latency|$cow|$mor")
if [ "$s3" = 1 ]; then
  port=$((20000 + RANDOM % 20000))
  "$cache/venv/bin/moto_server" -p "$port" > "$work/moto.log" 2>&1 &
  moto_pid=$!
  export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
  for _ in $(seq 50); do "$py" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port')" 2>/dev/null && break; sleep 0.2; done
  # A bucket each: the tables may sit in different folders under the same name.
  "$py" tests/http/s3_load.py "http://127.0.0.1:$port" lake-cow "$(dirname "$cow")" "$(basename "$cow")" >&2
  "$py" tests/http/s3_load.py "http://127.0.0.1:$port" lake-mor "$(dirname "$mor")" "$(basename "$mor")" >&2
  s3flags="--endpoint http://127.0.0.1:$port --path-style --region us-east-1 --latency-ms $latency"
  stores+=("moto S3, $latency ms per request|$s3flags|s3://lake-cow/$(basename "$cow")|s3://lake-mor/$(basename "$mor")")
fi

"$py" - "$bin" "$runs" "$out" "$work" "$build" "$latency" "${stores[@]}" <<'PY'
import json, os, re, statistics, subprocess, sys, time
from datetime import date

bin_, runs, out, work, build, latency, *stores = sys.argv[1:]
runs = int(runs)
DATA_BLOCKS = ("footer", "column_chunk", "log_block", "mdt_index_block", "mdt_data_block")
moto_log = os.path.join(work, "moto.log")

def moto_lines():
    if not os.path.exists(moto_log):
        return []
    with open(moto_log, errors="replace") as f:
        return [l for l in f if re.search(r'" \d{3} ', l)]

rows, details = [], []
for store in stores:
    name, flags, *urls = store.split("|")
    for label, url in zip(("COW", "MOR"), urls):
        times, seen = [], None
        for r in range(runs):
            before = len(moto_lines())
            t0 = time.perf_counter()
            p = subprocess.run([bin_, *flags.split(), "health", url, "--json", "--stats"],
                               capture_output=True, text=True)
            ms = (time.perf_counter() - t0) * 1000
            if p.returncode != 0:
                sys.exit(f"hudi-edge health {url}: {p.stderr}")
            times.append(ms)
            if name.startswith("moto"):
                seen = len(moto_lines()) - before
        health, stats = json.loads(p.stdout), json.loads(p.stderr.strip().splitlines()[-1])
        total = stats["total_io"]
        parts = health["partitions"]
        by = {k: v["requests"] for k, v in sorted(total.get("by_purpose", {}).items())}
        blocks = sum(total.get("by_purpose", {}).get(k, {}).get("requests", 0) for k in DATA_BLOCKS)
        rows.append({
            "table": f"{label} ({health['table']})", "store": name, "partitions": parts,
            "file_groups": health["file_groups"], "requests": total["requests"],
            "per_partition": total["requests"] / max(parts, 1), "by_purpose": by,
            "report_requests": stats["health_io"]["requests"], "bytes": total["bytes"],
            "data_blocks": blocks, "round_trips": total["round_trips"],
            "ms": statistics.median(times), "seen": seen,
            "commits_read": health["activity"]["commits_read"],
            "active": health["active_timeline_instants"],
        })
        print(f"{label} {name}: {total['requests']} requests ({total['requests'] / max(parts, 1):.1f} "
              f"per partition), {blocks} data blocks, {statistics.median(times):.0f} ms", file=sys.stderr)

ok = all(r["per_partition"] <= 10 and r["data_blocks"] == 0 for r in rows)
lines = [
    "# What a health report costs (`tests/bench/health_cost.sh`)", "",
    f"{date.today().isoformat()}, {build}, {runs} runs (median wall time), 2 cores shared with other work; "
    f"`hudi-edge [STORE FLAGS] health TABLE --json --stats`. Requests, bytes and round trips are "
    f"`total_io` of `--stats`: the open (properties, timeline listing) and the report. "
    f"Target: ≤ 10 requests per partition, no data block read — **{'met' if ok else 'missed'}**.", "",
    "| table | store | partitions | file groups | requests | per partition | by purpose | bytes | data blocks | round trips | wall ms | requests seen by S3 |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
]
for r in rows:
    by = ", ".join(f"{k} {v}" for k, v in r["by_purpose"].items())
    lines.append(
        f"| {r['table']} | {r['store']} | {r['partitions']} | {r['file_groups']} | {r['requests']} | "
        f"{r['per_partition']:.1f} | {by} | {r['bytes']:,} | {r['data_blocks']} | {r['round_trips']} | "
        f"{r['ms']:.0f} | {'' if r['seen'] is None else r['seen']} |")
lines += ["", "Commit metadata read for write activity (the last week's completed writes) and the "
          "active timeline's length: " + "; ".join(
              f"{r['table']} {r['commits_read']} of {r['active']} instants" for r in rows[:2]) + ".", ""]
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
PY
