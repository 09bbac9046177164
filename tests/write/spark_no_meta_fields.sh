#!/usr/bin/env bash
# The tables without meta fields (hoodie.populate.meta.fields=false) tests/write.rs's
# round trips left (the fixture's commits, then our upsert U and our delete D) in Apache Hudi
# Spark 1.1.1, on copies:
#   1. Spark's snapshot and time travel to U and to the commit before U equal ours;
#   2. Spark's incremental query fails as ours does (Hudi refuses it without meta fields);
#   3. Spark upserts after us (its index finds our keys by the key fields: a key it missed
#      would come back twice) and we read what it wrote;
#   4. we upsert after Spark; Spark and hudi-rs read it.
# (3 and 4 not with a record index: Hudi leaves it empty in such a table, so Spark's upserts
# insert keys again.)
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write no_meta_fields && tests/write/spark_no_meta_fields.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-no-meta}
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh

for src in "$tables"/*no_meta_fields*/; do
  n=$(basename "$src")
  t="$out/$n"
  rm -rf "$t"
  cp -r "$src" "$t"
  read -r prev u u_c < <("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = [x for x in json.load(sys.stdin)["instants"] if x["state"] == "completed" and x["action"] in ("commit", "deltacommit")]
print(i[-3]["requested_time"], i[-2]["requested_time"], i[-2]["completion_time"])')
  echo "$n"
  queries=(snapshot "as_of=$u" "as_of=$prev")
  tests/spark/run.sh tests/write/spark_queries.py "$t" "${queries[@]}" > "$t.spark.jsonl" 2> "$t.spark.err" ||
    { tail -3 "$t.spark.err"; status=1; }
  ours_queries "$t" "$t.ours.jsonl" "${queries[@]}"
  echo "  $("$py" tests/write/compare_queries.py "$t.spark.jsonl" "$t.ours.jsonl" "${queries[@]}")" || status=1
  if tests/spark/run.sh tests/write/spark_queries.py "$t" "incremental=000,$u_c" > /dev/null 2> "$t.inc.err"; then
    echo "  incremental: Spark answered"; status=1
  else
    spark_says=$(grep -m1 -oE 'HoodieException: .{0,80}' "$t.inc.err" || echo "another failure")
    ours_says=$("$bin" read "$t" --query incremental --end "$u_c" 2>&1 >/dev/null | head -1 || true)
    echo "  incremental: Spark refuses ($spark_says); hudi-edge: $ours_says"
    [[ "$spark_says" == *"meta fields are disabled"* && "$ours_says" == *UNSUPPORTED* ]] || status=1
  fi
  if grep -q '^hoodie.table.metadata.partitions=.*record_index' "$t/.hoodie/hoodie.properties"; then
    # Spark's upserts there insert every key again (its record index stays empty): nothing
    # of ours to check in them.
    echo "  Spark's writes: not run (Hudi keeps no record index without meta fields)"
    continue
  fi
  take_turns_with_spark "$t"
  hudi_rs_same "$t"
done
exit $status
