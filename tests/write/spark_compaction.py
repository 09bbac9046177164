#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1's side of tests/write/spark_compaction.sh and
tests/write/spark_clustering.sh (dev-only); one JVM runs the actions in order:

    tests/spark/run.sh tests/write/spark_compaction.py TABLE PREFIX ACTION...

ACTION:
  run=T            execute pending compaction T (`call run_compaction(op => 'run', ...)`, with
                   the table's metadata-table settings as its options)
  cluster=T        execute pending clustering T (`call run_clustering(op => 'execute', ...)`,
                   the table's metadata-table settings as its options)
  schedule-cluster schedule a clustering (`call run_clustering(op => 'schedule', ...)`)
  show-clustering  `call show_clustering(...)` into the report
  upsert-cluster   the same upsert with Hudi's inline clustering after it
                   (hoodie.clustering.inline, one commit enough)
  upsert           a Spark upsert (tests/write/spark_mdt.py's: 3 updates, new keys), inline
                   compaction off
  upsert-schedule  the same upsert, scheduling a compaction after it
                   (hoodie.compact.schedule.inline, one delta commit enough)
  rows             the snapshot and the read-optimized view to PREFIX.snapshot.jsonl and
                   PREFIX.ro.jsonl
  show             `call show_compaction(...)` into the report
  check            tests/write/spark_mdt.py's checks of the metadata table
  decode=FILE      an instant file (Avro container) read by Java's Avro library, as JSON, to
                   PREFIX.<file name>.json: {"schema": writer schema, "records": [...]}
The report (what each action did, errors) goes to PREFIX.report.json.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark import HUDI_1X, get_spark, read_properties, reader, rows_to_json  # noqa: E402
from spark_after import write_options  # noqa: E402
from spark_mdt import Checker, err, read_opts, upsert  # noqa: E402


def decode(spark, file, prefix):
    jvm = spark._jvm
    with open(file, "rb") as f:
        data = bytearray(f.read())
    source = jvm.org.apache.avro.file.SeekableByteArrayInput(data)
    avro = jvm.org.apache.avro.file.DataFileReader(source, jvm.org.apache.avro.generic.GenericDatumReader())
    out = {"schema": json.loads(avro.getSchema().toString()), "records": []}
    while avro.hasNext():
        out["records"].append(json.loads(avro.next().toString()))
    with open(f"{prefix}.{os.path.basename(file)}.json", "w") as f:
        json.dump(out, f, indent=1)


def main():
    path = os.path.abspath(sys.argv[1])
    prefix = sys.argv[2]
    actions = sys.argv[3:]
    spark = get_spark(HUDI_1X, app="spark_compaction", driver_memory="3g",
                      extra_conf={"spark.sql.adaptive.enabled": "false"})
    report = {"actions": actions, "upserts": [], "errors": []}
    checker = Checker(spark, path, prefix, [])
    for a in actions:
        try:
            # The table's metadata-table settings: a write client without them drops the
            # partitions it is not told about (the record index).
            mdt = {k: v for k, v in write_options(read_properties(path)).items() if k.startswith("hoodie.metadata.")}
            opts = ",".join(f"{k}={v}" for k, v in mdt.items())
            if a.startswith("run="):
                t = a.split("=", 1)[1]
                got = spark.sql(f"call run_compaction(op => 'run', path => '{path}', timestamp => {t}, "
                                f"options => '{opts}')").collect()
                report["run"] = [r.asDict() for r in got]
                report["run_options"] = opts
            elif a.startswith("cluster=") or a == "schedule-cluster":
                op, extra = ("execute", f", instants => '{a.split('=', 1)[1]}'") if "=" in a else ("schedule", "")
                got = spark.sql(f"call run_clustering(op => '{op}', path => '{path}'{extra}, "
                                f"options => '{opts}')").collect()
                report[op] = [{k: str(v) for k, v in r.asDict().items()} for r in got]
            elif a == "show-clustering":
                got = spark.sql(f"call show_clustering(path => '{path}')").collect()
                report["show_clustering"] = [{k: str(v) for k, v in r.asDict().items()} for r in got]
            elif a == "upsert":
                upsert(spark, path, report)
            elif a == "upsert-schedule":
                upsert(spark, path, report, extra={
                    "hoodie.compact.inline": "false",
                    "hoodie.compact.schedule.inline": "true",
                    "hoodie.compact.inline.max.delta.commits": "1",
                })
            elif a == "upsert-cluster":
                upsert(spark, path, report, extra={
                    "hoodie.clustering.inline": "true",
                    "hoodie.clustering.inline.max.commits": "1",
                })
            elif a == "rows":
                for name, query in (("snapshot", "snapshot"), ("ro", "read_optimized")):
                    df, _ = reader(spark, path, query, extra=read_opts(path))
                    with open(f"{prefix}.{name}.jsonl", "w") as f:
                        for r in rows_to_json(df):
                            f.write(json.dumps(r, sort_keys=True) + "\n")
            elif a == "show":
                got = spark.sql(f"call show_compaction(path => '{path}')").collect()
                report["show"] = [{k: str(v) for k, v in r.asDict().items()} for r in got]
            elif a == "check":
                checker.check()
            elif a.startswith("decode="):
                decode(spark, a.split("=", 1)[1], prefix)
            else:
                sys.exit(f"unknown action {a}")
        except Exception as e:  # noqa: BLE001
            report["errors"].append(f"{a}: {err(e)}")
            print(f"ACTION FAILED {a}: {err(e)}", file=sys.stderr)
    with open(prefix + ".report.json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    spark.stop()


if __name__ == "__main__":
    main()
