#!/usr/bin/env bash
# The tables tests/write.rs's writes_{cow,mor}_evolved_on_read left (Spark SQL renamed,
# dropped, retyped and re-added columns with hoodie.schema.on.read.enable; then our upsert of
# every row and a new key, and our delete) in Apache Hudi Spark 1.1.1, reading as such tables
# are read (schema on read on), on copies:
#   1. Spark's snapshot, time travel to the last commit before ours, and the incremental
#      range of our two commits equal ours;
#   2. Spark upserts after us (its commit carries the column ids on from ours) and we read
#      what it wrote;
#   3. we upsert after Spark and Spark reads it.
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write evolved_on_read && tests/write/spark_evolved_on_read.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-evolved-on-read}
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh

for src in "$tables"/evolved-on-read-*/; do
  n=$(basename "$src")
  t="$out/$n"
  cp -r "$src" "$t"
  echo "$n"
  # The fixture's last commit F, then ours: the upsert and the delete D.
  read -r f f_c d_c < <("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = [x for x in json.load(sys.stdin)["instants"]
     if x["state"] == "completed" and x["action"] in ("commit", "deltacommit", "replacecommit")]
f, d = i[-3], i[-1]
print(f.get("requestedTime", f.get("requested_time")), f.get("completionTime", f.get("completion_time")),
      d.get("completionTime", d.get("completion_time")))')
  queries=(snapshot "as_of=$f" "incremental=$f_c,$d_c")
  tests/spark/run.sh tests/write/spark_queries.py "$t" "${queries[@]}" > "$t.spark.jsonl" 2> "$t.spark.err" ||
    { tail -5 "$t.spark.err"; status=1; }
  ours_queries "$t" "$t.ours.jsonl" "${queries[@]}"
  cells=$("$py" tests/write/compare_queries.py "$t.spark.jsonl" "$t.ours.jsonl" "${queries[@]}") || status=1
  echo "  Spark/hudi-edge rows: $cells"
  spark_step "$t" 1
  "$bin" read "$t" --format jsonl | "$py" -c '
import json, sys
row = {k: v for k, v in json.loads(next(iter(sys.stdin))).items() if not k.startswith("_hoodie_")}
row["title"] = "edge-after-spark"
row["ts"] += 100
print(json.dumps(row))' > "$t.after_spark.jsonl"
  "$bin" write "$t" --input "$t.after_spark.jsonl" > /dev/null || status=1
  echo "  hudi-edge upsert after Spark: committed"
  spark_step "$t" 2 --read-only
done
exit $status
