#!/usr/bin/env python3
"""Several queries of one table in one Apache Hudi Spark 1.1.1 session, as JSON lines tagged
with the query: `{"query": NAME, "row": {...}}` (rows in read_table.py's encoding).

    tests/spark/run.sh tests/write/spark_queries.py TABLE snapshot as_of=T incremental=START,END ...
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark, reader, rows_to_json  # noqa: E402


def main():
    path, queries = os.path.abspath(sys.argv[1]), sys.argv[2:]
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    spark = get_spark(HUDI_1X, app="spark_queries", driver_memory="3g")
    for q in queries:
        if q == "snapshot":
            df, _ = reader(spark, path)
        elif q.startswith("as_of="):
            df, _ = reader(spark, path, as_of=q.split("=", 1)[1])
        elif q.startswith("incremental="):
            start, end = q.split("=", 1)[1].split(",")
            df, _ = reader(spark, path, "incremental", begin=start, end=end)
        else:
            sys.exit(f"unknown query {q}")
        for row in rows_to_json(df):
            out.write(json.dumps({"query": q, "row": row}, sort_keys=True) + "\n")
    out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
