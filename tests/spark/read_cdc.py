#!/usr/bin/env python3
"""Print the change feed Apache Hudi Spark returns for a table, as JSON lines.

    tests/spark/run.sh tests/spark/read_cdc.py TABLE START [END]

Each line: [op, ts_ms, before, after] (sorted), as tests/write/spark_cdc.sh compares them.
"""
import json
import sys

from hudi_spark import HUDI_1X, get_spark, read_cdc_feed

spark = get_spark(HUDI_1X, app="read-cdc", driver_memory="2g")
for row in read_cdc_feed(spark, sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None):
    print(json.dumps(row))
spark.stop()
