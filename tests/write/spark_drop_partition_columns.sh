#!/usr/bin/env bash
# The tables that do not store their partition columns (drop.partition.columns) tests/write.rs's
# round trips left (Spark's commits, then our upsert and delete; COW and MOR) in Apache Hudi
# Spark 1.1.1, on copies (tests/write/spark_check.sh compares Spark's queries of them with
# ours; hudi-rs refuses such tables):
#   1. Spark upserts after us (a key it missed would come back twice) and we read what it wrote;
#   2. we upsert after Spark; Spark reads it.
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write drop_partition && tests/write/spark_drop_partition_columns.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-drop-partition-columns}
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh

for n in cow_v9_drop_partition_columns mor_v9_drop_partition_columns; do
  t="$out/$n"
  cp -r "$tables/$n" "$t"
  echo "$n"
  take_turns_with_spark "$t"
done
exit $status
