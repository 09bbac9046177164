#!/usr/bin/env bash
# The tables tests/write_sequences.rs left (14 random commits each: updates that win, tie and
# lose on ordering, deletes, keys coming back, new partitions, metadata-table compactions)
# in Apache Hudi Spark 1.1.1, on copies:
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

for src in "$tables"/*/; do
  n=$(basename "$src")
  t="$out/$n"
  cp -r "$src" "$t"
  echo "$n ($("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = json.load(sys.stdin)["instants"]
print(len([x for x in i if x["state"] == "completed"]), "completed instants")'))"
  spark_step "$t" 1 --read-only
  spark_step "$t" 2
  hudi_rs_same "$t"
done
exit $status
