#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1 on a table with secondary indexes hudi-edge wrote into. Dev-only
helper of tests/write/spark_secondary_index.sh; one JVM runs the actions in order:

    tests/spark/run.sh tests/write/spark_secondary_index.py TABLE PREFIX ACTION... [--filter SQL]...

ACTION:
  query   each --filter read with the metadata table, its record and secondary indexes and data
          skipping on, to PREFIX.queryN.fI.jsonl; the files Spark's scan read with skipping on and
          off, and the snapshot, to PREFIX.queryN.report.json / PREFIX.queryN.rows.jsonl
  entries the live secondary-index entries as Spark reads the metadata table (a Hudi table
          of its own) to PREFIX.entriesN.json: {partition: [key, ...]}
  show-indexes  SHOW INDEXES of the table (registered for the run) to PREFIX.indexes.txt
  upsert  a Spark datasource upsert (metadata on, its indexes as write configs): the first two
          keys (sorted) get a new merchant_name, a new key comes in with an existing one
"""
from __future__ import annotations

import json
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark import get_spark, read_properties, rows_to_json  # noqa: E402
from spark_after import write_options  # noqa: E402

READ = {
    "hoodie.metadata.enable": "true",
    "hoodie.enable.data.skipping": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.index.secondary.enable": "true",
}


def files_read(df):
    """Files the scan read (FileSourceScanExec numFiles), None when not reported."""
    n = None
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    for i in range(leaves.size()):
        o = leaves.apply(i).metrics().get("numFiles")
        if o.isDefined():
            n = (n or 0) + int(o.get().value())
    return n


def write_lines(path, rows):
    with open(path, "w") as f:
        f.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def query(spark, path, prefix, n, filters):
    report = {"filters": []}
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    df = spark.read.format("hudi").options(**READ).load(path)
    write_lines(f"{prefix}.query{n}.rows.jsonl", rows_to_json(df))
    for i, f in enumerate(filters):
        on = spark.read.format("hudi").options(**READ).load(path).where(f)
        rows = rows_to_json(on)
        write_lines(f"{prefix}.query{n}.f{i}.jsonl", rows)
        off_opts = {**READ, "hoodie.enable.data.skipping": "false"}
        off = spark.read.format("hudi").options(**off_opts).load(path).where(f)
        off.collect()
        report["filters"].append({"filter": f, "rows": len(rows), "files_read_skipping_on": files_read(on),
                                  "files_read_skipping_off": files_read(off)})
    json.dump(report, open(f"{prefix}.query{n}.report.json", "w"), indent=1)


def entries(spark, path, prefix, n):
    """The MDT read as a table has no partition column: the indexes' entries are told apart
    by their value (txn_date's are day numbers, account_id's start `ACC-`, no merchant name
    does either, and only merchant_name holds nulls here)."""
    mdt = spark.read.format("hudi").load(os.path.join(path, ".hoodie", "metadata"))
    rows = mdt.where("type = 7").select("key", "SecondaryIndexMetadata").collect()
    parts = [p for p in read_properties(path)["hoodie.table.metadata.partitions"].split(",")
             if p.startswith("secondary_index_")]
    out = {p: [] for p in parts}
    for r in rows:
        if r["SecondaryIndexMetadata"] and r["SecondaryIndexMetadata"]["isDeleted"]:
            continue
        value = r["key"].split("$", 1)[0]
        part = ("secondary_index_txn_date_idx" if value.isdigit()
                else "secondary_index_account_id_idx" if value.startswith("ACC-")
                else "secondary_index_merchant_idx")
        out.setdefault(part, []).append(r["key"])
    json.dump({k: sorted(v) for k, v in out.items()}, open(f"{prefix}.entries{n}.json", "w"), indent=1)


def upsert(spark, path, prefix):
    props = read_properties(path)
    opts = write_options(props)
    opts["hoodie.metadata.index.secondary.enable"] = "true"
    df = spark.read.format("hudi").options(**READ).load(path)
    data_cols = [c for c in df.columns if not c.startswith("_hoodie_")]
    keys = sorted(r["txn_id"] for r in df.select("txn_id").collect())
    from pyspark.sql import functions as F
    changed = (df.where(F.col("txn_id").isin(keys[:2])).select(*data_cols)
               .withColumn("merchant_name", F.lit("Spark Merchant"))
               .withColumn("txn_ts", F.col("txn_ts") + F.lit(5_000_000_000)))
    new = (df.where(F.col("txn_id") == keys[2]).select(*data_cols)
           .withColumn("txn_id", F.lit("TXN-SPARK-1"))
           .withColumn("txn_ts", F.col("txn_ts") + F.lit(5_000_000_000)))
    batch = changed.unionByName(new)
    batch = spark.createDataFrame(batch.collect(), batch.schema)  # detach from the table it reads
    batch.write.format("hudi").options(**opts).mode("append").save(path)
    json.dump({"ok": True, "keys": keys[:3]}, open(f"{prefix}.upsert.json", "w"))


def main():
    path, prefix = sys.argv[1], sys.argv[2]
    actions, filters, args = [], [], sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--filter":
            filters.append(args.pop(0))
        else:
            actions.append(a)
    spark = get_spark(driver_memory="3g")
    counts = {}
    status = 0
    for a in actions:
        counts[a] = counts.get(a, 0) + 1
        try:
            if a == "query":
                query(spark, path, prefix, counts[a], filters)
            elif a == "entries":
                entries(spark, path, prefix, counts[a])
            elif a == "show-indexes":
                # The session's in-memory catalog: the name lives as long as this JVM.
                spark.sql(f"CREATE TABLE si_check USING hudi LOCATION '{path}'")
                rows = spark.sql("SHOW INDEXES FROM si_check").collect()
                open(f"{prefix}.indexes.txt", "w").write(
                    "; ".join(" ".join(str(v) for v in r) for r in rows))
            elif a == "upsert":
                upsert(spark, path, prefix)
            else:
                raise SystemExit(f"unknown action {a}")
        except Exception as e:  # noqa: BLE001
            print(f"{a.upper()} FAILED: {e}", file=sys.stderr)
            traceback.print_exc()
            status = 1
    spark.stop()
    sys.exit(status)


if __name__ == "__main__":
    main()
