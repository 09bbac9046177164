#!/usr/bin/env bash
# Inline compaction on and off: a Merge-On-Read table `hudi-edge create` makes (partitioned,
# metadata table with files, column_stats and partition_stats), then COMMITS commits of 100
# rows through the CLI (50 updates spread over the keys written so far, 50 new keys), every
# request delayed by LATENCY_MS (an object store's round trip). Every 20 commits a fresh
# process reads the whole table (`read --stats`): requests, bytes, time, and the log files
# in latest slices. Per mode: the commits' wall time (mean, worst) and what the
# compactions cost. At the end both tables hold the same rows, hudi-rs agreeing.
#
# Usage: tests/bench/compaction.sh [COMMITS]   (LATENCY_MS=20 by default; HUDI_EDGE_BIN to
#        use a built CLI; results: tests/bench/results/compaction.txt)
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
py="$cache/venv/bin/python"
commits=${1:-60}
latency=${LATENCY_MS:-20}
bin=${HUDI_EDGE_BIN:-target/release/hudi-edge}
[ -n "${HUDI_EDGE_BIN:-}" ] || cargo build -q --release --bin hudi-edge
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

scan() { # TABLE COMMITS
  local t0 t1 io logs
  t0=$(date +%s%N)
  "$bin" read "$1" --stats --latency-ms "$latency" > /dev/null 2> "$tmp/stats"
  t1=$(date +%s%N)
  io=$("$py" -c 'import json,sys; d=json.load(sys.stdin)["total_io"]; print(d["requests"], d["bytes"])' < "$tmp/stats")
  logs=$("$bin" plan "$1" --json | "$py" -c 'import json,sys; print(sum(len(s["log_files"]) for s in json.load(sys.stdin)["file_slices"]))')
  printf "  %7s %14s %20s %12s\n" "$2" "$logs" "$io" "$(( (t1 - t0) / 1000000 ))"
}

for mode in off on; do
  t=$tmp/$mode
  "$bin" create "$t" --columns 'id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE, note STRING' \
    --record-key id --partition-by region --ordering ts --type mor > /dev/null
  inline=$([ "$mode" = on ] && echo true || echo false)
  echo "inline compaction $mode (hoodie.compact.inline=$inline), $commits commits of 100 rows, ${latency} ms per request"
  printf "  %7s %14s %20s %12s\n" commits "logs in slices" "full scan req bytes" "full scan ms"
  scan "$t" 0
  : > "$tmp/$mode.times"
  for i in $(seq 1 "$commits"); do
    "$py" - "$i" > "$tmp/batch.jsonl" <<'PY'
import json, sys
i = int(sys.argv[1])
regions = ["eu", "us", "ap"]
written = 50 * (i - 1)  # keys K0.. so far
rows = {}
for j in range(50 if written else 0):
    k = (i * 7919 + j * 104729) % written
    rows[k] = {"id": f"K{k:05d}", "ts": 1000 * i + j, "region": regions[k % 3], "v": i + j / 100, "note": f"u{i}"}
for j in range(50):
    k = written + j
    rows[k] = {"id": f"K{k:05d}", "ts": i, "region": regions[k % 3], "v": float(k), "note": "new"}
for r in rows.values():
    print(json.dumps(r))
PY
    t0=$(date +%s%N)
    "$bin" write "$t" --input "$tmp/batch.jsonl" --json --latency-ms "$latency" \
      --option "hoodie.compact.inline=$inline" > "$tmp/w.json"
    t1=$(date +%s%N)
    "$py" - "$tmp/w.json" "$(( (t1 - t0) / 1000000 ))" "$i" >> "$tmp/$mode.times" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = (r.get("services") or {}).get("compaction") or {}
done = c.get("completed", [])
print(sys.argv[3], sys.argv[2], r["io"]["requests"], len(done),
      sum(d["io"]["requests"] for d in done), sum(d["elapsed_ms"] for d in done),
      sum(d["file_groups"] for d in done), sum(d["log_files"] for d in done), "ERROR" if c.get("error") else "")
PY
    [ $((i % 20)) = 0 ] && scan "$t" "$i"
  done
  "$py" - "$tmp/$mode.times" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
ms = [int(r[1]) for r in rows]
comp = [r for r in rows if int(r[3])]
print(f"  commits: mean {sum(ms) / len(ms):.0f} ms, worst {max(ms)} ms; write requests {sum(int(r[2]) for r in rows)} in all")
if comp:
    print(f"  {len(comp)} compactions (after commits {', '.join(r[0] for r in comp)}): "
          f"{sum(int(r[6]) for r in comp)} file groups, {sum(int(r[7]) for r in comp)} log files, "
          f"{sum(int(r[4]) for r in comp)} requests, {sum(int(r[5]) for r in comp)} ms in all; "
          f"commits without one: mean {sum(int(r[1]) for r in rows if not int(r[3])) / max(1, len(rows) - len(comp)):.0f} ms")
if any(r[-1] == "ERROR" for r in rows):
    print("  COMPACTION ERRORS")
PY
done
"$bin" read "$tmp/off" --format jsonl | "$py" -c 'import json,sys; print("\n".join(sorted(json.dumps({k: v for k, v in json.loads(l).items() if not k.startswith("_hoodie")}, sort_keys=True) for l in sys.stdin)))' > "$tmp/off.rows"
"$bin" read "$tmp/on" --format jsonl | "$py" -c 'import json,sys; print("\n".join(sorted(json.dumps({k: v for k, v in json.loads(l).items() if not k.startswith("_hoodie")}, sort_keys=True) for l in sys.stdin)))' > "$tmp/on.rows"
rs=$("$py" tests/write/hudi_rs_rows.py "$tmp/on" | wc -l)
if cmp -s "$tmp/off.rows" "$tmp/on.rows"; then same=same; else same=DIFFERENT; fi
echo "rows: $(wc -l < "$tmp/on.rows") with compaction, $(wc -l < "$tmp/off.rows") without ($same); hudi-rs reads $rs of the compacted table"
