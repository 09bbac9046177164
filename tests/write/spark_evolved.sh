#!/usr/bin/env bash
# Columns hudi-edge adds to a table (`write --add-columns`) read and keep growing in Apache
# Hudi Spark 1.1.1 and read in hudi-rs. For a COW and a MOR table created by the CLI:
#   1. three rows inserted, then an upsert from Parquet adding four columns (string, int,
#      decimal, date): one existing key updated (MOR: a log file over a base file without
#      them), one key new;
#   2. Spark reads the same rows, then upserts with its metadata table on, built from a
#      listing (files, column_stats, partition_stats, record_index);
#   3. hudi-edge adds a fifth column through that metadata table; Spark reads the same rows
#      and checks its metadata table; hudi-rs reads the same rows;
#   4. Spark upserts once more (its writer schema is now ours) and hudi-edge reads it.
# Dev-only (needs tests/spark/setup.sh): tests/write/spark_evolved.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-evolved}
source tests/write/spark_lib.sh

"$py" - "$out" <<'PY'
import datetime, decimal, sys
import pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
pq.write_table(pa.table({
    "id": pa.array([2, 4], pa.int64()), "ts": pa.array([5, 5], pa.int64()),
    "region": ["us", "eu"], "amount": [20.5, 4.5],
    "note": ["added-by-edge", None], "qty": pa.array([7, None], pa.int32()),
    "price": pa.array([decimal.Decimal("12.30"), decimal.Decimal("-0.05")], pa.decimal128(10, 2)),
    "day": pa.array([datetime.date(2026, 12, 4), None], pa.date32()),
}), f"{out}/add4.parquet")
pq.write_table(pa.table({
    "id": pa.array([1, 9], pa.int64()), "ts": pa.array([50, 50], pa.int64()),
    "region": ["eu", "ap"], "amount": [1.25, 9.5], "note": ["edge-again", "nine"],
    "batch_no": pa.array([3, 3], pa.int64()),
}), f"{out}/add1.parquet")
PY
printf '%s\n' '{"id":1,"ts":1,"region":"eu","amount":1.5}' '{"id":2,"ts":1,"region":"us","amount":2.5}' \
  '{"id":3,"ts":1,"region":"eu","amount":3.5}' > "$out/first.jsonl"

for type in cow mor; do
  t="$out/$type"
  echo "$type"
  "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, amount DOUBLE' \
    --record-key id --partition-by region --ordering ts --type "$type" > /dev/null
  "$bin" write "$t" --input "$out/first.jsonl" --operation insert > /dev/null
  "$bin" write "$t" --input "$out/add4.parquet" --add-columns --json > "$t.add4.json"
  echo "  hudi-edge upsert adding note, qty, price, day: $("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' "$t.add4.json")"
  spark_step "$t" 1 --read-only
  spark_step "$t" 2 --with-metadata
  "$bin" write "$t" --input "$out/add1.parquet" --add-columns --json > "$t.add1.json"
  echo "  hudi-edge upsert adding batch_no: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["records"], "metadata-table partitions", d["metadata_table"]["partitions"])' "$t.add1.json")"
  spark_step "$t" 3 --read-only
  hudi_rs_same "$t"
  spark_step "$t" 4
  # Spark's writer extended the column-stats index to the column we added: partition stats
  # then count only its files' nulls. A filtered read must still find every null.
  indexed=$("$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["indexDefinitions"]["column_stats"]["sourceFields"][-2:]))' "$t/.hoodie/.index_defs/index.json")
  nulls=$(grep -c '"batch_no": null' "$t.spark4.jsonl" || true)
  filtered=$("$bin" read "$t" --filter 'batch_no is null' --format jsonl | grep -c . || true)
  if [ "$nulls" = "$filtered" ]; then r=same; else r=DIFFERENT; status=1; fi
  echo "  column-stats index ends with [$indexed]; hudi-edge 'batch_no is null' through the metadata table: $filtered rows, Spark's snapshot: $nulls ($r)"
done
exit $status
