#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1 reads many tables in one session: each TABLE's snapshot as JSON
lines (read_table.py's encoding) into TABLE.spark.jsonl, or the error into TABLE.spark.error.

    tests/spark/run.sh tests/write/spark_read_many.py TABLE...
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark, reader, rows_to_json  # noqa: E402


def main():
    tables = [t.rstrip("/") for t in sys.argv[1:]]
    # The JVM's chatter goes to stderr; files carry the rows.
    os.dup2(2, 1)
    spark = get_spark(HUDI_1X, app="read_many", driver_memory="4g")
    for i, path in enumerate(tables):
        try:
            df, _ = reader(spark, path, "snapshot")
            with open(path + ".spark.jsonl", "w") as out:
                for row in rows_to_json(df):
                    out.write(json.dumps(row, sort_keys=True) + "\n")
        except Exception as e:  # noqa: BLE001 - every failure is a finding, reported per table
            with open(path + ".spark.error", "w") as out:
                out.write(str(e)[:4000])
        if i % 25 == 0:
            print(f"spark: {i + 1}/{len(tables)} read", file=sys.stderr, flush=True)


main()
