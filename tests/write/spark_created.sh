#!/usr/bin/env bash
# Tables hudi-edge created (tests/write.rs `created_*`: `Table::create`, then this writer's
# insert, upsert and delete) grow up in Apache Hudi Spark 1.1.1, on copies:
#   1. Spark upserts with its metadata table on, which it builds from a listing
#      (files, column_stats, partition_stats, record_index);
#   2. hudi-edge reads what Spark then reads, and upserts through that metadata table;
#   3. Spark reads again and checks the metadata table (files procedure, record index);
#   4. hudi-rs (PyPI hudi) reads the same rows.
# Also an empty table created by the CLI whose first commit is Spark's.
# Dev-only (needs tests/spark/setup.sh):
#   cargo test --test write created_ && tests/write/spark_created.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-created}
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh

for src in "$tables"/created_*/; do
  n=$(basename "$src")
  t="$out/$n"
  cp -r "$src" "$t"
  echo "$n"
  tests/spark/run.sh tests/write/spark_after.py "$t" --with-metadata --report "$out/$n.1.json" \
    > "$out/$n.spark1.jsonl" 2> "$out/$n.spark1.err"
  echo "  spark upsert, metadata table built: $(cat "$out/$n.1.json" | tr -d '\n ' | cut -c1-200)"
  ours "$t" > "$out/$n.ours1.jsonl"
  same "after Spark's upsert, Spark vs hudi-edge" "$out/$n.spark1.jsonl" "$out/$n.ours1.jsonl"
  # Our upsert through Spark's metadata table: the first row with a string column changed.
  "$bin" read "$t" --format jsonl | "$py" -c '
import json, sys
props = dict(l.strip().split("=", 1) for l in open(sys.argv[1]) if "=" in l and not l.startswith("#"))
fixed = set(props.get("hoodie.table.recordkey.fields", "").split(",")) | set(props.get("hoodie.table.partition.fields", "").split(",")) | set(props.get("hoodie.table.ordering.fields", "").split(","))
row = {k: v for k, v in json.loads(sorted(sys.stdin)[0]).items() if not k.startswith("_hoodie_")}
schema = json.loads(props["hoodie.table.create.schema"].replace("\\:", ":").replace("\\=", "="))
strings = [f["name"] for f in schema["fields"] if f["type"] in ("string", ["null", "string"])]
col = next(k for k in strings if k not in fixed)
row[col] = "edge-after-spark"
for o in props.get("hoodie.table.ordering.fields", "").split(","):
    if isinstance(row.get(o), int):
        row[o] += 100
print(json.dumps(row))' "$t/.hoodie/hoodie.properties" > "$out/$n.edge.jsonl"
  "$bin" write "$t" --input "$out/$n.edge.jsonl" --json > "$out/$n.edge.json"
  echo "  hudi-edge upsert: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["records"], "metadata-table partitions", d["metadata_table"]["partitions"])' "$out/$n.edge.json")"
  tests/spark/run.sh tests/write/spark_after.py "$t" --read-only --report "$out/$n.2.json" \
    > "$out/$n.spark2.jsonl" 2> "$out/$n.spark2.err"
  echo "  spark checks after it: $(cat "$out/$n.2.json" | tr -d '\n ' | cut -c1-400)"
  ours "$t" > "$out/$n.ours2.jsonl"
  same "after our upsert, Spark vs hudi-edge" "$out/$n.spark2.jsonl" "$out/$n.ours2.jsonl"
  "$py" tests/write/hudi_rs_rows.py "$t" > "$out/$n.hudi_rs.jsonl"
  "$bin" read "$t" --format oracle-jsonl > "$out/$n.ours2.canon.jsonl"
  same "after our upsert, hudi-rs vs hudi-edge" "$out/$n.hudi_rs.jsonl" "$out/$n.ours2.canon.jsonl"
done

# An empty table from the CLI, first written by Spark.
t="$out/cli_created_spark_first"
echo "cli_created_spark_first"
"$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
  --record-key id --partition-by region --ordering ts --type mor
tests/spark/run.sh tests/write/spark_first.py "$t" > "$out/first.spark.jsonl" 2> "$out/first.spark.err"
ours "$t" > "$out/first.ours.jsonl"
same "Spark's first commit, Spark vs hudi-edge" "$out/first.spark.jsonl" "$out/first.ours.jsonl"
printf '{"id":2,"ts":11,"region":"eu","note":"edge"}\n{"id":4,"ts":1,"region":"eu","note":"new"}\n' > "$out/first.edge.jsonl"
"$bin" write "$t" --input "$out/first.edge.jsonl" --json > "$out/first.edge.json"
echo "  hudi-edge upsert: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["records"], "metadata-table partitions", d["metadata_table"]["partitions"])' "$out/first.edge.json")"
tests/spark/run.sh tests/write/spark_after.py "$t" --read-only --report "$out/first.2.json" \
  > "$out/first.spark2.jsonl" 2> "$out/first.spark2.err"
echo "  spark checks after it: $(cat "$out/first.2.json" | tr -d '\n ' | cut -c1-400)"
ours "$t" > "$out/first.ours2.jsonl"
same "after our upsert, Spark vs hudi-edge" "$out/first.spark2.jsonl" "$out/first.ours2.jsonl"
exit $status
