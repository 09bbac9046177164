#!/usr/bin/env python3
"""One upsert of an Arrow IPC stream's rows through Apache Hudi Spark 1.1.1, timed:
prints {"seconds": write time, "jvm_start_seconds": ...}.

    tests/spark/run.sh tests/bench/spark_upsert.py TABLE INPUT.arrow
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "write"))
from hudi_spark import HUDI_1X, get_spark, read_properties  # noqa: E402
from spark_after import write_options  # noqa: E402

import pyarrow.ipc as ipc  # noqa: E402


def main():
    path, arrow_file = os.path.abspath(sys.argv[1]), sys.argv[2]
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    t0 = time.perf_counter()
    spark = get_spark(HUDI_1X, app="spark_upsert", driver_memory="4g")
    existing = spark.read.format("hudi").load(path)
    schema = existing.select(*[c for c in existing.columns if not c.startswith("_hoodie_")]).schema
    started = time.perf_counter() - t0
    rows = ipc.open_stream(open(arrow_file, "rb")).read_all().to_pylist()
    t1 = time.perf_counter()
    df = spark.createDataFrame(rows, schema=schema)
    df.write.format("hudi").options(**write_options(read_properties(path))).mode("append").save(path)
    out.write(json.dumps({"seconds": round(time.perf_counter() - t1, 3), "jvm_start_seconds": round(started, 3)}) + "\n")


if __name__ == "__main__":
    main()
