#!/usr/bin/env bash
# The storage-based table lock (Hudi's RFC-91 lock) and commits under it:
#  1. uncontended acquire + release: requests, round trips and time, on local files with
#     20 ms added to every request (`--latency-ms`, median of 7), and against moto's S3 on
#     loopback, where the server's access log counts the requests;
#  2. commit throughput with 1, 4 and 8 writers on disjoint keys (CLI processes, one per
#     commit, multi-writer options; local files with 20 ms per request), and the same
#     number of commits by one single-writer process after another for comparison.
# Usage: tests/bench/lock.sh [--latency-ms 20] [--commits 12] [--debug]
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
py="$cache/venv/bin/python"
latency=20 commits=12 profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --latency-ms) latency=$2; shift 2 ;;
    --commits) commits=$2; shift 2 ;;
    --debug) profile=debug; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
target="${CARGO_TARGET_DIR:-target}"
if [ "$profile" = release ]; then cargo build -q --release --bin hudi-edge; else cargo build -q --bin hudi-edge; fi
bin="$target/$profile/hudi-edge"
fixture=tests/data/fixtures/tables/sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle.zip
work=$(mktemp -d "${TMPDIR:-/tmp}/lock-bench.XXXXXX")
moto_pid=
cleanup() { [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
(cd "$work" && unzip -q "$OLDPWD/$fixture")
table=$(find "$work" -maxdepth 2 -name .hoodie -printf '%h\n' | head -1)

echo "== uncontended acquire + release ($profile build, $latency ms per request, local files, median of 7)"
for _ in 1 2 3 4 5 6 7; do "$bin" --latency-ms "$latency" lock "$table"; done > "$work/lock.jsonl"
"$py" - "$work/lock.jsonl" <<'PY'
import json, statistics, sys
text = open(sys.argv[1]).read()
runs, dec, i = [], json.JSONDecoder(), 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    obj, i = dec.raw_decode(text, i)
    runs.append(obj)
for step in ("acquire", "release"):
    ms = statistics.median(r[step]["ms"] for r in runs)
    req = {r[step]["requests"] for r in runs}
    rt = {r[step]["round_trips"] for r in runs}
    print(f"{step:8} requests {sorted(req)}  round trips {sorted(rt)}  median {ms:.1f} ms")
PY

echo "== uncontended acquire + release against moto's S3 (requests the server saw)"
port=$((20000 + RANDOM % 20000))
"$cache/venv/bin/moto_server" -p "$port" > "$work/moto.log" 2>&1 &
moto_pid=$!
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
for _ in $(seq 50); do "$py" -c "import boto3; boto3.client('s3', endpoint_url='http://127.0.0.1:$port', region_name='us-east-1').create_bucket(Bucket='lake')" 2>/dev/null && break; sleep 0.2; done
for round in first again; do
  start=$(wc -l < "$work/moto.log")
  "$bin" --endpoint "http://127.0.0.1:$port" --path-style lock s3://lake/t > "$work/s3.json"
  seen=$(tail -n +"$((start + 1))" "$work/moto.log" | grep -c '" [0-9][0-9][0-9] ' || true)
  echo "$round (lock $( [ $round = first ] && echo absent || echo expired)): requests seen by S3: $seen; $(tail -n +"$((start + 1))" "$work/moto.log" | grep -o '"[A-Z]* /lake/t/.hoodie/.locks/table_lock.json[^"]*" [0-9]*' | sed 's/ HTTP[^"]*"/"/' | tr '\n' ' ')"
done
kill "$moto_pid"; moto_pid=

echo "== commit throughput, disjoint keys ($commits commits per writer, $latency ms per request, local files)"
printf "%-28s %8s %10s %10s %9s\n" writers commits seconds commits/s conflicts
for writers in 1 4 8; do
  "$py" tests/write/multi_writer.py "$bin" "$fixture" --store local --disjoint \
    --writers "$writers" --commits "$commits" --latency-ms "$latency" > "$work/mw.json"
  "$py" - "$work/mw.json" "$writers" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(f"{'multi-writer x ' + sys.argv[2]:28} {s['acknowledged']:8} {s['seconds']:10} {s['commits_per_s']:10} {s['refused_conflict']:9}")
PY
done
# One writer without the lock, commit after commit (the single-writer path).
rm -rf "$work/single" && cp -a "$table" "$work/single"
"$bin" read "$work/single" | head -1 | "$py" -c '
import json, sys
r = {k: v for k, v in json.loads(sys.stdin.readline()).items() if not k.startswith("_hoodie_")}
for i in range(int(sys.argv[1])):
    r["txn_id"] = f"SINGLE-{i}"
    open(f"{sys.argv[2]}/single-{i}.jsonl", "w").write(json.dumps(r) + "\n")
' "$commits" "$work"
t0=$(date +%s%N)
for i in $(seq 0 $((commits - 1))); do "$bin" --latency-ms "$latency" write "$work/single" --input "$work/single-$i.jsonl" > /dev/null; done
t1=$(date +%s%N)
"$py" -c "import sys; n, ns = int(sys.argv[1]), int(sys.argv[2]); print(f\"{'single writer (no lock)':28} {n:8} {ns / 1e9:10.1f} {n / (ns / 1e9):10.2f} {0:9}\")" "$commits" "$((t1 - t0))"
