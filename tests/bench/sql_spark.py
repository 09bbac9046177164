#!/usr/bin/env python3
"""Spark SQL's side of tests/bench/sql.py: each query RUNS times in one JVM on a snapshot view of
TABLE (Hudi 1.1.1).

    tests/spark/run.sh tests/bench/sql_spark.py TABLE RUNS QUERY...

Prints one JSON object per query: {"sql": q, "rows": [...], "ms": [..]} (rows as strings).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark, reader  # noqa: E402


def main():
    table, runs, queries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    spark = get_spark(HUDI_1X, app="sql-bench", driver_memory="4g")
    df, _ = reader(spark, table)
    df.createOrReplaceTempView("t")
    for q in queries:
        ms, rows = [], []
        for _ in range(runs):
            t = time.perf_counter()
            rows = spark.sql(q).collect()
            ms.append(round((time.perf_counter() - t) * 1000))
        shown = sorted(json.dumps([str(v) for v in r], sort_keys=True) for r in rows)
        print(json.dumps({"sql": q, "rows": shown, "ms": ms}), flush=True)


if __name__ == "__main__":
    main()
