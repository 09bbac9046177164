#!/usr/bin/env python3
"""What Apache Hudi Spark 1.1.1 says of a table's cleans (dev-only, tests/write/spark_clean.sh):
its `show_cleans`, `show_cleans_metadata` and `show_clean_plans` procedures, and every clean
plan (`.clean.requested`) and completed clean on the timeline decoded by Java's Avro reader,
as one JSON object on stdout.

    tests/spark/run.sh tests/write/spark_clean.py TABLE_PATH > cleans.json
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark  # noqa: E402


def decode(spark, path):
    """One Avro container file through Java's generic Avro reader: (schema, record)."""
    jvm = spark._jvm
    data = bytearray(open(path, "rb").read())
    reader = jvm.org.apache.avro.file.DataFileReader(
        jvm.org.apache.avro.file.SeekableByteArrayInput(data),
        jvm.org.apache.avro.generic.GenericDatumReader())
    record = json.loads(reader.next().toString())
    return reader.getSchema().toString(), record


def rows(spark, sql):
    return [r.asDict() for r in spark.sql(sql).collect()]


def main():
    path = os.path.abspath(sys.argv[1])
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    spark = get_spark(HUDI_1X, app="spark_clean", driver_memory="2g")
    spark.sql(f"create table if not exists cleaned using hudi location '{path}'")
    report = {
        "show_cleans": rows(spark, "call show_cleans(table => 'cleaned', limit => 100)"),
        "show_cleans_metadata": rows(spark, "call show_cleans_metadata(table => 'cleaned', limit => 100)"),
        "show_clean_plans": rows(spark, "call show_clean_plans(table => 'cleaned', limit => 100)"),
        "instants": {},
    }
    timeline = os.path.join(path, ".hoodie", "timeline")
    for name in sorted(os.listdir(timeline)):
        if name.endswith(".clean.requested") or name.endswith(".clean"):
            schema, record = decode(spark, os.path.join(timeline, name))
            report["instants"][name] = {"schema": schema, "record": record}
    out.write(json.dumps(report, default=str, sort_keys=True))
    out.flush()


if __name__ == "__main__":
    main()
