#!/usr/bin/env bash
# Change feeds of our commits against Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh). For a copy of each Spark-written CDC table of tests/data/cdc (every
# supplemental logging mode, COW and MOR):
#   1. hudi-edge upserts (three updates, one new key) and deletes a key: the feed of our two
#      commits as Spark's CDC query returns it = ours (COW: from our CDC log files; MOR: from
#      our log files merged with the slice before them);
#   2. Spark upserts after us: its feed from before our commits on = ours, and Spark's
#      snapshot = ours.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_cdc.sh [OUT_DIR] [TABLE...]
#        (results: tests/bench/results/write_spark_cdc.txt; one JVM at a time)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-cdc}
shift || true
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(cdc_v9_cow_op_key_only cdc_v9_cow_data_before cdc_v9_cow_data_before_after
  cdc_v9_mor_op_key_only cdc_v9_mor_data_before cdc_v9_mor_data_before_after cdc_v8_mor_data_before_after)

# Our feed of table $1 after $2, as Spark's rows: [op, ts_ms, before, after] lines.
our_feed() {
  "$bin" read "$1" --query cdc --start "$2" --format jsonl | "$py" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps([r["op"], r["ts_ms"], r["before"], r["after"]]))'
}

spark_feed() { # TABLE START OUT   (the JVM prints warnings on stdout too: rows only)
  flock /tmp/spark.lock tests/spark/run.sh tests/spark/read_cdc.py "$1" "$2" > "$3.all" 2> "$3.err" \
    || { echo "  SPARK CDC READ FAILED: $(grep -E 'Exception' "$3.err" | head -3)"; status=1; }
  grep '^\[' "$3.all" > "$3" || true
}

feeds_same() { # WHAT TABLE START PREFIX
  our_feed "$2" "$3" > "$4.ours.jsonl" || { echo "  hudi-edge CDC read FAILED"; status=1; }
  spark_feed "$2" "$3" "$4.spark.jsonl"
  local ops
  ops=$("$py" -c '
import collections, json, sys
print(dict(sorted(collections.Counter(json.loads(l)[0] for l in open(sys.argv[1]) if l.strip()).items())))' "$4.spark.jsonl")
  same "$1, change feed $ops" "$4.spark.jsonl" "$4.ours.jsonl"
}

for name in "${tables[@]}"; do
  echo "$name"
  t=$out/$name
  (cd "$out" && unzip -q "$OLDPWD/tests/data/cdc/$name.zip")
  t0=$("$bin" timeline "$t" --json | "$py" -c '
import json, sys
print(max(i["requested_time"] for i in json.load(sys.stdin)["instants"] if i["state"] == "completed"))')
  edit_three_rows "$t" "$t.up.jsonl"
  "$py" - "$t.up.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
new = dict(rows[0], id="id-090", name="edge-new")
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(new) + "\n")
PY
  "$bin" read "$t" --format jsonl | tail -1 | "$py" -c '
import json, sys
r = json.loads(sys.stdin.read())
print(json.dumps({"id": r["id"], "part": r["part"]}))' > "$t.del.jsonl"
  if "$bin" write "$t" --input "$t.up.jsonl" > /dev/null && "$bin" write "$t" --operation delete --input "$t.del.jsonl" > /dev/null; then
    echo "  hudi-edge: upsert (3 updates, 1 new key) and delete (1 key) committed"
  else
    echo "  hudi-edge write FAILED"; status=1; continue
  fi
  feeds_same "our two commits" "$t" "$t0" "$t.feed1"
  spark_step "$t" 2
  feeds_same "our commits and Spark's upsert after them" "$t" "$t0" "$t.feed2"
done

echo "total $((SECONDS - start)) s"
exit $status
