#!/usr/bin/env bash
# The change feed of one commit on the 1M-row bench tables (tests/spark/make_bench_tables.py)
# with the change feed turned on (`hoodie.table.cdc.enabled=true`, DATA_BEFORE_AFTER, on copies):
# Spark upserts 100 rows (50 updates spread over the table, 50 new keys), then hudi-edge does
# the same; for each of the two commits, hudi-edge's `read --query cdc` (requests, bytes, round
# trips, wall time of the process; locally and with 20 ms added to every request) beside Spark
# 1.1.1's CDC query of the same commit (wall time in a warm JVM, each run RUNS times).
# Results: tests/bench/results/cdc_feed.md.
#
#   tests/bench/cdc_feed.sh [--runs 3] [--debug]
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
py="$cache/venv/bin/python"
runs=3 profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --debug) profile=debug; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -n "${HUDI_EDGE_BIN:-}" ]; then bin=$HUDI_EDGE_BIN; else
  if [ "$profile" = release ]; then cargo build -q --release --bin hudi-edge; else cargo build -q --bin hudi-edge; fi
  bin="${CARGO_TARGET_DIR:-target}/$profile/hudi-edge"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cdc-feed.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=tests/bench/results/cdc_feed.md
{
  echo "# The change feed of one commit on the 1M-row bench tables"
  echo
  echo "\`tests/bench/cdc_feed.sh --runs $runs\` on $(date -u +%Y-%m-%d), $(nproc) cores, $bin."
  echo "Copies of bench_cow_v9 / bench_mor_v9 with \`hoodie.table.cdc.enabled=true\`; each commit"
  echo "upserts 100 rows (50 updates spread over the table, 50 new keys). hudi-edge: the CLI"
  echo "process (open, plan, read); Spark: \`spark.read … incremental.format=cdc … collect()\` in a"
  echo "warm JVM (process start and session not counted). Times: every run, ms."
  echo
  echo "| table | commit by | rows | hudi-edge requests | bytes | round trips | hudi-edge ms (local) | hudi-edge ms (20 ms/request) | Spark ms |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$out.tmp"
for kind in cow mor; do
  t=$work/${kind}_cdc
  cp -r "$cache/tables/bench_${kind}_v9" "$t"
  printf 'hoodie.table.cdc.enabled=true\nhoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE_AFTER\n' >> "$t/.hoodie/hoodie.properties"
  rm -f "$t/.hoodie/.hoodie.properties.crc"  # the local file system checksum of the old text
  before_spark=$("$bin" timeline "$t" --json | "$py" -c '
import json, sys
print(max(i["requested_time"] for i in json.load(sys.stdin)["instants"] if i["state"] == "completed"))')
  spark_commit=$(flock /tmp/spark.lock tests/spark/run.sh tests/bench/cdc_feed_spark.py upsert "$t" 2> "$work/spark.err" | grep '^{' | "$py" -c 'import json, sys; print(json.loads(sys.stdin.read())["upsert"])')
  # Ours: 50 rows read back and edited, 50 new keys.
  ids=$(seq 13 20000 999999 | head -50 | paste -sd, -)
  "$bin" read "$t" --filter "id in ($ids)" --format jsonl | "$py" -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
for r in rows:
    r = {k: v for k, v in r.items() if not k.startswith("_hoodie_")}
    r["ts"] += 10**12; r["customer"] = "edge"
    print(json.dumps(r))
for i in range(50):
    r = dict(r, id=4_000_000 + i, region=rows[i % len(rows)]["region"], customer="edge-new")
    print(json.dumps(r))' > "$work/up.jsonl"
  "$bin" write "$t" --input "$work/up.jsonl" --json > "$work/ours.json"
  our_commit=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["instant"])' "$work/ours.json")
  spark_times=$(flock /tmp/spark.lock tests/spark/run.sh tests/bench/cdc_feed_spark.py time "$t" "$runs" "$before_spark:$spark_commit" "$spark_commit:$our_commit" 2>> "$work/spark.err" | grep '^{')
  for pair in "Spark|$before_spark|$spark_commit" "hudi-edge|$spark_commit|$our_commit"; do
    IFS='|' read -r by start end <<< "$pair"
    local_ms=() remote_ms=()
    for _ in $(seq "$runs"); do
      t0=$(date +%s%N)
      "$bin" read "$t" --query cdc --start "$start" --end "$end" > "$work/feed.jsonl"
      local_ms+=($(( ($(date +%s%N) - t0) / 1000000 )))
      t0=$(date +%s%N)
      # Round trips count only where requests take time: the stats of the 20 ms runs.
      "$bin" --latency-ms 20 read "$t" --query cdc --start "$start" --end "$end" --stats > /dev/null 2> "$work/stats.json"
      remote_ms+=($(( ($(date +%s%N) - t0) / 1000000 )))
    done
    "$py" - "$work/stats.json" "$kind" "$by" "${local_ms[*]}" "${remote_ms[*]}" "$spark_times" "$start:$end" >> "$out.tmp" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
io = [s["plan_io"], s["read_io"]]
req = sum(x["requests"] for x in io); by = sum(x["bytes"] for x in io)
rt = sum(x["round_trips"] for x in io)
spark = next(json.loads(l) for l in sys.argv[6].splitlines() if json.loads(l)["range"] == sys.argv[7])
assert spark["rows"] == s["rows"], (spark["rows"], s["rows"])
print(f"| {sys.argv[2]} | {sys.argv[3]} | {s['rows']} {s['operations']} | {req} | {by:,} | {rt} | {sys.argv[4].replace(' ', ', ')} | {sys.argv[5].replace(' ', ', ')} | {', '.join(map(str, spark['ms']))} |")
PY
  done
  rm -rf "$t"
done
mv "$out.tmp" "$out"
cat "$out"
