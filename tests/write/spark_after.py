#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1 keeps writing a table hudi-edge wrote: an upsert (two updates of
existing keys, one new key) with the metadata table and the table's own indexes on, then the
snapshot as JSON lines (the same encoding as read_table.py) on stdout.

    tests/spark/run.sh tests/write/spark_after.py TABLE_PATH > rows.jsonl

--with-metadata: the upsert builds the metadata table (files, column_stats, partition_stats,
record_index) on a table that has none. --read-only: no upsert, the snapshot and the checks.
--new-key-per-run: the upsert's new key is one no earlier run used.
--move-key: the upsert's first updated row also takes another row's partition values.
--opt KEY=VALUE (repeatable): a writer setting hoodie.properties does not hold (e.g. the
bucket index's hoodie.index.type=BUCKET and hoodie.bucket.index.num.buckets).
--services: the upsert runs Hudi's table services inline after it, set to act at once: the
cleaner (keep 1 commit), archival (keep 2 to 3 instants; the metadata table compacted after
every delta commit, as archival waits for it) and, on Merge-On-Read, compaction (after every
delta commit).
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
from hudi_spark import HUDI_1X, get_spark, read_properties, reader, rows_to_json, schema_on_read_options  # noqa: E402

KEYGENS = {
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    "TIMESTAMP": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
}


FULL_METADATA = ["files", "column_stats", "partition_stats", "record_index"]


def table_metadata(props: dict) -> list:
    if "--with-metadata" in sys.argv:
        return FULL_METADATA
    return [p for p in props.get("hoodie.table.metadata.partitions", "").split(",") if p]


def write_options(props: dict) -> dict:
    """Spark datasource write options for an upsert into the table `props` describes, with
    its metadata-table indexes on."""
    mdt = table_metadata(props)
    opts = {
        "hoodie.table.name": props["hoodie.table.name"],
        "hoodie.datasource.write.table.type": props["hoodie.table.type"],
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": props["hoodie.table.recordkey.fields"],
        "hoodie.datasource.write.partitionpath.field": props.get("hoodie.table.partition.fields", ""),
        # Table version 8 names it hoodie.table.precombine.field.
        "hoodie.datasource.write.precombine.field": props.get(
            "hoodie.table.ordering.fields", props.get("hoodie.table.precombine.field", "")),
        "hoodie.datasource.write.hive_style_partitioning": props.get(
            "hoodie.datasource.write.hive_style_partitioning", "false"),
        "hoodie.datasource.write.keygenerator.class": KEYGENS[props.get("hoodie.table.keygenerator.type", "SIMPLE")],
        "hoodie.metadata.enable": str(bool(mdt)).lower(),
        "hoodie.metadata.record.index.enable": str("record_index" in mdt).lower(),
        "hoodie.metadata.index.column.stats.enable": str("column_stats" in mdt).lower(),
        "hoodie.metadata.index.partition.stats.enable": str("partition_stats" in mdt).lower(),
        "hoodie.compact.inline": "false",
        "hoodie.clustering.inline": "false",
        "hoodie.parquet.small.file.limit": "0",
    }
    if "record_index" in mdt:
        opts["hoodie.index.type"] = "RECORD_INDEX"
    if "--services" in sys.argv:
        opts.update({
            "hoodie.clean.automatic": "true",
            "hoodie.clean.async": "false",
            "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3",
            "hoodie.compact.inline": str(props["hoodie.table.type"] == "MERGE_ON_READ").lower(),
            "hoodie.compact.inline.max.delta.commits": "1",
            # Archival never passes the metadata table's latest compaction.
            "hoodie.metadata.compact.max.delta.commits": "1",
        })
    for k, v in props.items():
        if k.startswith("hoodie.keygen."):
            opts[k] = v
    if not props.get("hoodie.table.partition.fields"):
        opts["hoodie.datasource.write.keygenerator.class"] = KEYGENS["NON_PARTITION"]
    return opts


def main():
    path = os.path.abspath(sys.argv[1])
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    props = read_properties(path)
    spark = get_spark(HUDI_1X, app="spark_after", driver_memory="3g")
    mdt = table_metadata(props)
    opts = write_options(props)
    opts.update(schema_on_read_options(path))
    for i, a in enumerate(sys.argv):
        if a == "--opt":
            k, v = sys.argv[i + 1].split("=", 1)
            opts[k] = v
    if "--read-only" in sys.argv:
        after, _ = reader(spark, path, "snapshot")
        finish(out, spark, path, after, mdt)
        return

    df, _ = reader(spark, path, "snapshot")
    data_cols = [c for c in df.columns if not c.startswith("_hoodie_")]
    rows = df.select(*data_cols).orderBy(*data_cols[:1]).limit(3).collect()
    keys = props["hoodie.table.recordkey.fields"].split(",")
    edit = next(f.name for f in df.schema.fields
                if f.name in data_cols and f.dataType.simpleString() == "string"
                and f.name not in keys and f.name not in opts["hoodie.datasource.write.partitionpath.field"].split(",")
                and f.name not in opts["hoodie.datasource.write.precombine.field"].split(","))
    ordering = opts["hoodie.datasource.write.precombine.field"].split(",")[0]
    changed = []
    for i, r in enumerate(rows[:2]):
        d = r.asDict()
        d[edit] = f"spark-edit-{i}"
        if ordering and isinstance(d.get(ordering), int):
            d[ordering] += 10
        changed.append(d)
    new = rows[2].asDict()
    # --new-key-per-run: a key no earlier run used. Otherwise a second run updates the first's
    # key, possibly with another partition value: under a global index Hudi keeps the record
    # in its partition with that value in its data, which Spark then shows from the path and
    # hudi-rs (and hudi-edge) from the file.
    n = df.count() if "--new-key-per-run" in sys.argv else 0
    for k in keys:
        new[k] = f"SPARK-NEW-{n}" if isinstance(new[k], str) else 800_001 + n
    changed.append(new)
    if "--move-key" in sys.argv:
        # The first row's key again, with another row's partition values: under the record
        # index (hoodie.record.index.update.partition.path false) Hudi keeps the record in its
        # partition with these values in its data.
        parts = [p for p in opts["hoodie.datasource.write.partitionpath.field"].split(",") if p]
        first = changed[0]
        other = next(r.asDict() for r in df.select(*data_cols).collect()
                     if any(r[p] != first[p] for p in parts))
        changed[0] = {**first, **{p: other[p] for p in parts}}
    batch = spark.createDataFrame(changed, schema=df.select(*data_cols).schema)
    batch.write.format("hudi").options(**opts).mode("append").save(path)
    after, _ = reader(spark, path, "snapshot")
    finish(out, spark, path, after, mdt)


def finish(out, spark, path, after, mdt):
    """The snapshot as JSON lines on `out`; the checks' report on stderr (and --report)."""
    rows = rows_to_json(after)
    for row in rows:
        out.write(json.dumps(row, sort_keys=True) + "\n")
    out.flush()
    report = {"rows": len(rows)}
    if mdt:
        report.update(validate(spark, path, after, "record_index" in mdt))
    print(json.dumps(report), file=sys.stderr)
    if "--report" in sys.argv:
        with open(sys.argv[sys.argv.index("--report") + 1], "w") as f:
            json.dump(report, f, indent=1)


def validate(spark, path, snapshot, record_index):
    """What Hudi's own metadata-table checks say (the utilities bundle's validator is not
    served here): the files procedure (metadata table vs storage listing) and, when the
    table has one, the record index against the snapshot's keys and file groups."""
    spark.sql(f"create table if not exists written using hudi location '{path}'")
    files = spark.sql("call validate_metadata_table_files(table => 'written', verbose => true)").collect()
    def bad(row):
        d = {k.lower(): v for k, v in row.asDict().items()}
        sizes = [v for k, v in d.items() if "size" in k]
        return any(v is False for v in d.values()) or len(set(sizes)) > 1
    mismatched = [r.asDict() for r in files if bad(r)]
    out = {"files_procedure_rows": len(files), "files_procedure_sample": files[0].asDict() if files else None,
           "files_mismatches": mismatched[:5]}
    if not record_index:
        return out
    try:
        mdt = spark.read.format("hudi").load(path + "/.hoodie/metadata")
        ri = mdt.where("type = 5").select("key", "recordIndexMetadata").collect()
        index = {r["key"]: r["recordIndexMetadata"] for r in ri if r["recordIndexMetadata"] is not None}
        live = {r["_hoodie_record_key"]: r["_hoodie_file_name"] for r in snapshot.select("_hoodie_record_key", "_hoodie_file_name").collect()}
        missing = sorted(set(live) - set(index))
        extra = sorted(set(index) - set(live))
        wrong = [k for k, f in live.items() if k in index and index[k]["fileId"] and not f.startswith(index[k]["fileId"])]
        out.update({"record_index_entries": len(index), "snapshot_keys": len(live),
                    "keys_missing_from_index": missing[:5], "index_keys_not_in_snapshot": extra[:5],
                    "keys_in_other_file_group": wrong[:5]})
    except Exception as e:  # noqa: BLE001 - report, do not hide
        out["record_index_check_error"] = str(e)[:500]
    return out


if __name__ == "__main__":
    main()
