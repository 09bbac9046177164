#!/usr/bin/env bash
# The bucket-index tables tests/write.rs's writes_*_bucket_index left (Spark's commits, then
# our upsert: updates, new keys in existing buckets and in a partition without buckets) in
# Apache Hudi Spark 1.1.1, on copies, with the bucket settings their Spark writer used:
#   1. Spark reads the snapshot we read;
#   2. Spark upserts keys we inserted (its bucket index finds them only in the file group of
#      their bucket: a misplaced key would come back twice) and we read what it wrote;
#   3. we upsert after Spark; Spark and hudi-rs read it.
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write bucket_index && tests/write/spark_bucket.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-bucket}
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh

for src in "$tables"/bucket-*/; do
  n=$(basename "$src")
  t="$out/$n"
  cp -r "$src" "$t"
  case "$n" in
    bucket-spark_v9_bucket_cow) settings=(hoodie.index.type=BUCKET hoodie.bucket.index.num.buckets=2 hoodie.bucket.index.hash.field=id) ;;
    bucket-spark_v9_bucket_mor) settings=(hoodie.index.type=BUCKET hoodie.bucket.index.num.buckets=4) ;;
    *) echo "$n: no bucket settings known, skipped"; continue ;;
  esac
  spark_opts=() edge_opts=()
  for s in "${settings[@]}"; do spark_opts+=(--opt "$s"); edge_opts+=(--option "$s"); done
  echo "$n (${settings[*]})"
  spark_step "$t" 1 --read-only
  spark_step "$t" 2 "${spark_opts[@]}"
  no_key_twice "$t.spark2.jsonl" "$t"
  edit_three_rows "$t" "$t.after_spark.jsonl"
  if "$bin" write "$t" --input "$t.after_spark.jsonl" "${edge_opts[@]}" > /dev/null; then
    echo "  hudi-edge upsert after Spark: committed"
  else
    status=1
  fi
  spark_step "$t" 3 --read-only
  hudi_rs_same "$t"
done
exit $status
