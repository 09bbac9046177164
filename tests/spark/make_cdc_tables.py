#!/usr/bin/env python3
"""Change-data-capture tables written by Apache Hudi Spark, with the change feed Spark reads back.

    tests/spark/run.sh tests/spark/make_cdc_tables.py WORK [NAME...]
    tests/spark/run.sh tests/spark/make_cdc_tables.py --hudi 0.15.0 WORK     (table version 6: write only)
    tests/spark/run.sh tests/spark/make_cdc_tables.py --read-only [--hudi V] WORK NAME... (feeds of tables in WORK)

For each supplemental logging mode (op_key_only, data_before, data_before_after) and table type
(COPY_ON_WRITE, MERGE_ON_READ), table version 9 (plus one version-8 table), writes WORK/tables/NAME
with `hoodie.table.cdc.enabled=true` and these commits:

  insert 12 keys, insert 12 keys, upsert (4 updates + 1 new key), delete 2 keys,
  upsert (MOR: with inline compaction, a compaction commit follows), upsert with inline
  clustering (a clustering replace commit follows), insert_overwrite of one partition,
  upsert (1 update + 1 new key)

Hudi 0.15.0 writes the version-6 tables (COW and MOR, data_before_after) and reads their feeds
(Hudi 1.1.1 reads the COW one alike, and fails on the MOR one: it parses version-6 delta
commits as Avro); Hudi 1.1.1 reads every other feed. The script then reads the feed with `hoodie.datasource.query.incremental.format=cdc` for every completed
instant alone (begin = the previous instant's requested time, end = its own) and for the whole
range, and writes WORK/NAME.json: the instants and each feed's rows ([op, ts_ms, before, after],
sorted). tests/write/make_cdc_tables.sh zips the tables next to their JSON in tests/data/cdc.
"""
import datetime as dt
import decimal
import json
import os
import sys

from hudi_spark import HUDI_0X, HUDI_1X, get_spark, read_cdc_feed as read_feed

PARTS = ["p0", "p1", "p2"]
V6_MOR_NOTE = ("Apache Hudi 1.1.1 fails on this table's change feed (it parses version-6 delta commits "
               "as Avro: 'Fail to parse the base file and log files from DeltaCommit'); Hudi 0.15.0 "
               "read it. 0.15.0 renders images its own way (field order, CDC-log images with meta "
               "fields) and gets the deletes of the file groups an insert overwrite dropped wrong "
               "(none in that commit's own feed, one record repeated for each in a wider range), "
               "which 1.1.1 reports as the groups' records.")
MODES = ["op_key_only", "data_before", "data_before_after"]


def rows(ids, gen):
    out = []
    for i in ids:
        out.append((
            f"id-{i:03d}",
            None if i % 7 == 0 else f"name_{i}_{gen}",
            (i * 37 + gen) % 100,
            decimal.Decimal(f"{(i * 101 + gen * 7) % 100000 / 100:.2f}"),
            dt.date(2024, 1, 1) + dt.timedelta(days=i),
            dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=i, seconds=gen),
            (i * 13 + gen) / 8.0,
            i % 2 == 0,
            1000 + i + gen * 1000,
            PARTS[i % 3],
        ))
    return out


def tables(version):
    if version == HUDI_0X:
        return {f"cdc_v6_{short}_data_before_after": (kind, "data_before_after", {})
                for kind, short in [("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")]}
    out = {}
    for kind, short in [("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")]:
        for mode in MODES:
            out[f"cdc_v9_{short}_{mode}"] = (kind, mode, {})
    out["cdc_v8_mor_data_before_after"] = ("MERGE_ON_READ", "data_before_after",
                                           {"hoodie.write.table.version": "8"})
    return out


def main():
    args = sys.argv[1:]
    version, read_only = HUDI_1X, False
    if args[0] == "--hudi":
        version, args = args[1], args[2:]
    if args[0] == "--read-only":
        read_only, args = True, args[1:]
    if args[0] == "--hudi":
        version, args = args[1], args[2:]
    work, only = args[0], args[1:]
    from pyspark.sql.types import (BooleanType, DateType, DecimalType, DoubleType, IntegerType,
                                   LongType, StringType, StructField, StructType, TimestampType)
    schema = StructType([
        StructField("id", StringType(), False),
        StructField("name", StringType(), True),
        StructField("qty", IntegerType(), True),
        StructField("amount", DecimalType(12, 2), True),
        StructField("event_date", DateType(), True),
        StructField("event_ts", TimestampType(), True),
        StructField("score", DoubleType(), True),
        StructField("even", BooleanType(), True),
        StructField("ts", LongType(), False),
        StructField("part", StringType(), False),
    ])
    spark = get_spark(version, app="cdc", driver_memory="3g")
    base = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "true",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.clean.automatic": "false",
        "hoodie.table.cdc.enabled": "true",
    }
    compact = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    cluster = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "1"}
    steps = [
        (range(1, 13), 0, "insert", {}),
        (range(13, 25), 0, "insert", {}),
        ([1, 5, 13, 20, 25], 1, "upsert", {}),
        ([2, 14], 0, "delete", {}),
        ([3, 5, 16, 26], 2, "upsert", compact),
        ([4, 17], 3, "upsert", cluster),
        ([31, 34], 4, "insert_overwrite", {}),
        ([6, 27], 5, "upsert", {}),
    ]
    all_tables = {**tables(HUDI_1X), **tables(HUDI_0X)} if read_only else tables(version)
    for name, (kind, mode, extra) in all_tables.items():
        if only and name not in only:
            continue
        path = os.path.join(work, "tables", name)
        opts = dict(base, **extra, **{
            "hoodie.table.name": name, "hoodie.datasource.write.table.type": kind,
            "hoodie.table.cdc.supplemental.logging.mode": mode})
        done = []
        for ids, gen, op, more in ([] if read_only else steps):
            if more is compact and kind != "MERGE_ON_READ":
                more = {}
            df = spark.createDataFrame(rows(ids, gen), schema)
            df.write.format("hudi").options(**opts, **more) \
                .option("hoodie.datasource.write.operation", op).mode("append").save(path)
            done.append({"op": op, "keys": [f"id-{i:03d}" for i in ids],
                         "options": sorted(more)})
        if version == HUDI_0X and not read_only:
            with open(os.path.join(work, f"{name}.steps.json"), "w") as f:
                json.dump({"steps": done, "opts": opts}, f)
            continue
        if read_only:
            with open(os.path.join(work, f"{name}.steps.json")) as f:
                written = json.load(f)
            done, opts = written["steps"], written["opts"]
        instants = completed_instants(spark, path)
        feeds = []
        ranges = [("000", instants[-1]["requested_time"])]
        prev = "000"
        for inst in instants:
            ranges.append((prev, inst["requested_time"]))
            prev = inst["requested_time"]
        for start, end in ranges:
            feeds.append({"start": start, "end": end, "rows": read_feed(spark, path, start, end)})
        with open(os.path.join(work, f"{name}.json"), "w") as f:
            json.dump({
                "table": name, "table_type": kind, "supplemental_logging_mode": mode,
                "written_by": f"Apache Hudi {HUDI_0X if read_only else HUDI_1X} Spark bundle, DataFrame writer",
                "read_by": f"Apache Hudi {version} Spark bundle, "
                           "hoodie.datasource.query.incremental.format=cdc",
                **({"read_by_note": V6_MOR_NOTE} if version == HUDI_0X else {}),
                "writer_options": opts, "steps": done, "completed_instants": instants,
                "rows": "[op, ts_ms, before, after] as Spark returns them, sorted",
                "feeds": feeds}, f, indent=1)
    spark.stop()


def completed_instants(spark, path):
    """Completed instants of the active timeline, from the file names (layout 2, or layout 1
    of table version 6: `<requested>.<action>` without a completion time)."""
    timeline = os.path.join(path, ".hoodie", "timeline")
    layout1 = not os.path.isdir(timeline)
    if layout1:
        timeline = os.path.join(path, ".hoodie")
    out = []
    for f in sorted(os.listdir(timeline)):
        parts = f.split(".")
        if len(parts) != 2 or not parts[0].split("_")[0].isdigit():
            continue
        if parts[1] not in ("commit", "deltacommit", "replacecommit"):
            continue
        requested, _, completion = parts[0].partition("_")
        out.append({"requested_time": requested, "completion_time": completion or None,
                    "action": parts[1]})
    out.sort(key=lambda i: i["requested_time"])
    return out


main()
