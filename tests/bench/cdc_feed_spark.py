#!/usr/bin/env python3
"""Spark's side of tests/bench/cdc_feed.sh on a copy of a 1M-row bench table with the change
feed on: an upsert (50 updates spread over the table, 50 new keys), then the wall time of
Spark's CDC query of given commits (each run RUNS times in one JVM).

    tests/spark/run.sh tests/bench/cdc_feed_spark.py upsert TABLE
    tests/spark/run.sh tests/bench/cdc_feed_spark.py time TABLE RUNS START:END...

Prints one JSON object per line: {"upsert": instant} or {"range": "S:E", "rows": n, "ms": [..]}.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark  # noqa: E402
from make_bench_tables import gen_rows, hudi_options  # noqa: E402


def main():
    what, table = sys.argv[1], sys.argv[2]
    spark = get_spark(HUDI_1X, app="cdc-bench", driver_memory="4g")
    props = dict(line.strip().split("=", 1) for line in open(os.path.join(table, ".hoodie", "hoodie.properties"))
                 if "=" in line and not line.startswith("#"))
    name = props["hoodie.table.name"]
    if what == "upsert":
        kind = props["hoodie.table.type"]
        opts = hudi_options(name, kind)
        opts["hoodie.table.cdc.enabled"] = "true"
        from pyspark.sql import functions as F
        updates = gen_rows(spark, 0, 1_000_000, version=5).where(F.col("id") % 20000 == 7)
        inserts = gen_rows(spark, 3_000_000, 3_000_050, version=5)
        df = updates.unionByName(inserts)
        df.write.format("hudi").options(**opts).option(
            "hoodie.datasource.write.operation", "upsert").mode("append").save(table)
        timeline = os.path.join(table, ".hoodie", "timeline")
        done = sorted(f.split("_")[0] for f in os.listdir(timeline)
                      if f.endswith((".commit", ".deltacommit")) and "_" in f)
        print(json.dumps({"upsert": done[-1]}))
        return
    runs = int(sys.argv[3])
    for r in sys.argv[4:]:
        start, end = r.split(":")
        times, rows = [], 0
        for _ in range(runs):
            t0 = time.perf_counter()
            rows = spark.read.format("hudi") \
                .option("hoodie.datasource.query.type", "incremental") \
                .option("hoodie.datasource.query.incremental.format", "cdc") \
                .option("hoodie.datasource.read.begin.instanttime", start) \
                .option("hoodie.datasource.read.end.instanttime", end) \
                .load(table).select("op", "ts_ms", "before", "after").collect()
            times.append(round((time.perf_counter() - t0) * 1000))
            rows = len(rows)
        print(json.dumps({"range": r, "rows": rows, "ms": times}))
    spark.stop()


main()
