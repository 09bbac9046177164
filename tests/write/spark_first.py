#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1 makes the first commit of an empty table hudi-edge created
(columns `id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING`, see
spark_created.sh), with its metadata table on, then prints the snapshot as JSON lines.

    tests/spark/run.sh tests/write/spark_first.py TABLE_PATH > rows.jsonl
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark import HUDI_1X, get_spark, read_properties, reader, rows_to_json  # noqa: E402
from spark_after import FULL_METADATA, write_options  # noqa: E402


def main():
    path = os.path.abspath(sys.argv[1])
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.argv.append("--with-metadata")
    props = read_properties(path)
    spark = get_spark(HUDI_1X, app="spark_first", driver_memory="3g")
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    schema = StructType([StructField("id", LongType(), False), StructField("ts", LongType()),
                         StructField("region", StringType()), StructField("note", StringType())])
    rows = [(1, 10, "us", "a"), (2, 10, "eu", "b"), (3, 10, "us", "c")]
    spark.createDataFrame(rows, schema).write.format("hudi").options(**write_options(props)) \
        .mode("append").save(path)
    after, _ = reader(spark, path, "snapshot")
    for row in rows_to_json(after):
        out.write(json.dumps(row, sort_keys=True) + "\n")
    out.flush()
    print(json.dumps({"metadata_partitions": read_properties(path).get("hoodie.table.metadata.partitions"),
                      "expected": FULL_METADATA}), file=sys.stderr)


if __name__ == "__main__":
    main()
