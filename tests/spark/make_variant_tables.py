#!/usr/bin/env python3
"""Spark-written tables with writer options the shared fixtures do not cover (issue 15, item 4),
written by Apache Hudi 1.1.1 through the DataFrame writer (table version 9):

  spark_v9_bucket_cow        hoodie.index.type=BUCKET (simple bucket index, 2 buckets)
  spark_v9_drop_partcols     hoodie.datasource.write.drop.partition.columns=true
  spark_v9_drop_partcols_mor the same, Merge-On-Read (its log blocks keep the partition column)
  spark_v9_urlencoded        partition values with '/', ' ' and '%' and partitionpath.urlencode
  spark_v9_cdc_mor           hoodie.table.cdc.enabled (MOR; reads ignore the CDC log files)
  spark_v9_colstats_types    column stats (and partition stats) on decimal, date and timestamp
  spark_v9_no_meta_fields_cow  hoodie.populate.meta.fields=false (virtual keys) with its metadata
  spark_v9_no_meta_fields_mor  table (files, column stats, partition stats); MOR: log files
  spark_v9_no_meta_fields_record_index_mor  the same (MOR) with the record index as its index
  spark_v6_mdt_cow           Hudi 0.15.0 (table version 6) with its metadata table (files,
                             column stats, record index): planning stays on listing for v6

    tests/spark/run.sh tests/spark/make_variant_tables.py WORK [NAME...]
    tests/spark/run.sh tests/spark/make_variant_tables.py --hudi 0.15.0 WORK [NAME...]

Writes WORK/tables/NAME and appends one line per table to WORK/steps.jsonl (the filtered
reads each table's expectations include). tests/write/make_spark_variants.sh zips them and
takes the expectations with tests/write/hudi_rs_matrix_expected.py.
"""
import datetime as dt
import decimal
import json
import os
import sys

from hudi_spark import HUDI_0X, HUDI_1X, get_spark

PARTS = ["p0", "p1", "p2"]
ODD_PARTS = ["a/b", "c d", "50%"]


def rows(ids, gen, parts):
    out = []
    for i in ids:
        out.append((
            f"id-{i:03d}",
            None if i % 7 == 0 else f"name_{i}_{gen}",
            (i * 37 + gen) % 100,
            decimal.Decimal(f"{(i * 101 + gen * 7) % 100000 / 100:.2f}"),
            dt.date(2024, 1, 1) + dt.timedelta(days=i),
            dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=i, seconds=gen),
            1000 + i + gen * 1000,
            parts[i % 3],
        ))
    return out


def main():
    args = sys.argv[1:]
    version = HUDI_1X
    if args[0] == "--hudi":
        version, args = args[1], args[2:]
    work, only = args[0], args[1:]
    from pyspark.sql.types import (DateType, DecimalType, IntegerType, LongType, StringType,
                                   StructField, StructType, TimestampType)
    schema = StructType([
        StructField("id", StringType(), False),
        StructField("name", StringType(), True),
        StructField("qty", IntegerType(), True),
        StructField("amount", DecimalType(12, 2), True),
        StructField("event_date", DateType(), True),
        StructField("event_ts", TimestampType(), True),
        StructField("ts", LongType(), False),
        StructField("part", StringType(), False),
    ])
    spark = get_spark(version, app="variants", driver_memory="3g")
    base = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "true",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.clean.automatic": "false",
    }
    filters = [[["amount", ">", "500.00"]], [["event_date", "<", "2024-01-08"]],
               [["event_ts", ">=", "2024-01-01T20:00:00Z"]], [["id", "=", "id-005"]]]
    no_meta_fields = {
        "hoodie.populate.meta.fields": "false",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.partition.stats.enable": "true"}
    tables = {
        "spark_v9_bucket_cow": ("COPY_ON_WRITE", PARTS, {
            "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
            "hoodie.bucket.index.hash.field": "id"}),
        "spark_v9_bucket_mor": ("MERGE_ON_READ", PARTS, {
            "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}),
        "spark_v9_drop_partcols": ("COPY_ON_WRITE", PARTS, {
            "hoodie.datasource.write.drop.partition.columns": "true"}),
        "spark_v9_drop_partcols_mor": ("MERGE_ON_READ", PARTS, {
            "hoodie.datasource.write.drop.partition.columns": "true"}),
        "spark_v9_urlencoded": ("COPY_ON_WRITE", ODD_PARTS, {
            "hoodie.datasource.write.partitionpath.urlencode": "true"}),
        "spark_v9_cdc_mor": ("MERGE_ON_READ", PARTS, {
            "hoodie.table.cdc.enabled": "true",
            "hoodie.table.cdc.supplemental.logging.mode": "data_before_after"}),
        "spark_v9_colstats_types": ("COPY_ON_WRITE", PARTS, {
            "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.index.partition.stats.enable": "true",
            "hoodie.metadata.record.index.enable": "true"}),
        "spark_v9_no_meta_fields_cow": ("COPY_ON_WRITE", PARTS, no_meta_fields),
        "spark_v9_no_meta_fields_mor": ("MERGE_ON_READ", PARTS, no_meta_fields),
        "spark_v9_no_meta_fields_record_index_mor": ("MERGE_ON_READ", PARTS, {
            "hoodie.populate.meta.fields": "false",
            "hoodie.metadata.record.index.enable": "true",
            "hoodie.index.type": "RECORD_INDEX"}),
    }
    if version == HUDI_0X:
        tables = {"spark_v6_mdt_cow": ("COPY_ON_WRITE", PARTS, {
            "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.record.index.enable": "true"})}
    for name, (kind, parts, extra) in tables.items():
        if only and name not in only:
            continue
        path = os.path.join(work, "tables", name)
        opts = dict(base, **extra, **{"hoodie.table.name": name, "hoodie.datasource.write.table.type": kind})

        def write(data, op):
            df = spark.createDataFrame(data, schema)
            df.write.format("hudi").options(**opts).option("hoodie.datasource.write.operation", op) \
                .mode("append").save(path)

        steps = []
        for ids, gen, op in [(range(1, 13), 0, "insert"), (range(13, 25), 0, "insert"),
                             ([1, 5, 13, 20], 1, "upsert"), ([2, 14], 0, "delete"),
                             ([3, 5, 16, 25, 26], 2, "upsert")]:
            write(rows(ids, gen, parts), op)
            steps.append({"op": op, "keys": len(ids)})
        with open(os.path.join(work, "steps.jsonl"), "a") as f:
            f.write(json.dumps({"table": name, "steps": steps, "filters": filters,
                                "written_by": f"Apache Hudi {version} Spark bundle, DataFrame writer",
                                "options": opts}) + "\n")
    spark.stop()


main()
