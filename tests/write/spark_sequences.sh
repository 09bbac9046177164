#!/usr/bin/env bash
# The tables tests/write_sequences.rs left (14 random commits each: updates that win, tie and
# lose on ordering, deletes, keys coming back, new partitions, metadata-table compactions)
# in Apache Hudi Spark 1.1.1, on copies:
#   0. Spark's incremental reads from every commit to the latest equal ours (Merge-On-Read:
#      the files the range's commits wrote, merged alone);
#   1. Spark reads the snapshot we read, and checks the metadata table (files procedure
#      against storage, record index against the snapshot);
#   2. Spark upserts (its metadata table and indexes on) and checks again; we read its rows;
#   3. hudi-rs reads the same rows.
# Time travel and incremental reads of the same tables: tests/write/spark_check.sh with
# HUDI_EDGE_WRITE_TABLES pointing at them.
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write_sequences && tests/write/spark_sequences.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-sequences}
tables=${HUDI_EDGE_SEQ_TABLES:-target/tmp/write-seq}
source tests/write/spark_lib.sh

# Incremental reads from every completed write's completion time to the latest, in Spark
# and here (one Spark session), compared query by query.
incremental_from_every_commit() {
  local t=$1 queries=()
  mapfile -t queries < <("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = [x for x in json.load(sys.stdin)["instants"]
     if x["state"] == "completed" and x["action"] in ("commit", "deltacommit", "replacecommit")]
c = [x.get("completionTime", x.get("completion_time")) for x in i]
for start in c[:-1]:
    print(f"incremental={start},{c[-1]}")')
  tests/spark/run.sh tests/write/spark_queries.py "$t" "${queries[@]}" > "$t.incr.spark.jsonl" 2> "$t.incr.spark.err" || {
    # Hudi answers no incremental query on a table without meta fields; neither do we.
    local start=${queries[0]#incremental=}
    if grep -q "Incremental queries are not supported when meta fields are disabled" "$t.incr.spark.err" &&
      ! "$bin" read "$t" --query incremental --start "${start%,*}" --format jsonl > /dev/null 2> "$t.incr.ours.err" &&
      grep -q "meta fields are disabled" "$t.incr.ours.err"; then
      echo "  incremental: refused by Spark and by hudi-edge (meta fields disabled)"
    else
      tail -5 "$t.incr.spark.err" "$t.incr.ours.err" 2> /dev/null
      status=1
    fi
    return
  }
  ours_queries "$t" "$t.incr.ours.jsonl" "${queries[@]}"
  echo "  incremental from each of ${#queries[@]} commits, Spark/hudi-edge rows:"
  "$py" tests/write/compare_queries.py "$t.incr.spark.jsonl" "$t.incr.ours.jsonl" "${queries[@]}" |
    tr ';' '\n' | sed 's/^ */    /' || status=1
}

for src in "$tables"/*/; do
  n=$(basename "$src")
  t="$out/$n"
  cp -r "$src" "$t"
  echo "$n ($("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = json.load(sys.stdin)["instants"]
print(len([x for x in i if x["state"] == "completed"]), "completed instants")'))"
  incremental_from_every_commit "$t"
  spark_step "$t" 1 --read-only
  spark_step "$t" 2
  hudi_rs_same "$t"
done
exit $status
