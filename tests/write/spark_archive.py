#!/usr/bin/env python3
"""The archived (LSM history) instants of a table and of its metadata table as Apache Hudi
Spark 1.1.1's own Java classes read them, one JSON object on stdout:
{"data": [[requested, completion, action], ...], "metadata": [...]}.

    tests/spark/run.sh tests/write/spark_archive.py TABLE_PATH
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, archived_instants, get_spark  # noqa: E402


def main():
    path = os.path.abspath(sys.argv[1])
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    spark = get_spark(HUDI_1X, app="spark_archive", driver_memory="2g")
    result = {}
    for name, p in (("data", path), ("metadata", os.path.join(path, ".hoodie", "metadata"))):
        got = archived_instants(spark, p)
        result[name] = sorted([i["requested_time"], i["completion_time"], i["action"]]
                              for i in got if i["state"] == "COMPLETED")
    out.write(json.dumps(result) + "\n")
    out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
