#!/usr/bin/env python3
"""Tables whose schema evolved on read (`hoodie.schema.on.read.enable`, Hudi's InternalSchema
with column ids): Spark SQL renames, drops, retypes and re-adds columns without rewriting the
files written before, so readers must map those files' columns by id, not by name.

    tests/spark/run.sh tests/spark/make_evolved_tables.py WORK

Writes WORK/tables/spark_v9_schema_on_read_{cow,mor} and a line per table in
WORK/steps.jsonl; tests/write/make_spark_variants.sh zips them with what PyPI `hudi` and
Hudi Spark 1.1.1 read back.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark import HUDI_1X, get_spark  # noqa: E402

# (statement, step for the JSON); {t} is the table.
STEPS = [
    ("insert into {t} values (1,'a',1.5,10,1,'n-a','eu'),(2,'b',2.5,20,1,'n-b','us'),"
     "(3,'c',3.5,30,1,'n-c','eu'),(5,'e',5.5,50,1,'n-e','us')", "insert 4 keys"),
    ("update {t} set qty = 11, ts = 2 where id = 1", "update 1 (before any change)"),
    ("alter table {t} rename column name to title", "rename name -> title"),
    ("alter table {t} drop column price", "drop price"),
    ("alter table {t} alter column qty type bigint", "qty int -> bigint"),
    ("alter table {t} drop column note", "drop note"),
    ("alter table {t} add columns (note string)", "add note again (a new column id)"),
    ("update {t} set title = 'c3', note = 'n3', ts = 3 where id = 3", "update 3"),
    ("insert into {t} values (4,'d',2000000000000,5,'n4','eu')", "insert 1 key"),
    ("delete from {t} where id = 5", "delete 5"),
]


def main():
    work = os.path.abspath(sys.argv[1])
    spark = get_spark(HUDI_1X, app="make_evolved_tables", driver_memory="3g")
    for k, v in {
        "hoodie.schema.on.read.enable": "true",
        # ALTER TABLE drops columns through a commit whose schema lacks them.
        "hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true",
        # Inserts start file groups: files of every schema version stay in the latest slices.
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.compact.inline": "false",
        "hoodie.compact.schedule.inline": "false",
    }.items():
        spark.sql(f"set {k}={v}")
    for typ in ["cow", "mor"]:
        name = f"spark_v9_schema_on_read_{typ}"
        path = os.path.join(work, "tables", name)
        shutil.rmtree(path, ignore_errors=True)
        spark.sql(f"drop table if exists {name}")
        spark.sql(f"""create table {name} (id int, name string, price double, qty int, ts bigint,
            note string, region string) using hudi
            tblproperties (type = '{typ}', primaryKey = 'id', preCombineField = 'ts',
              'hoodie.metadata.enable' = 'true', 'hoodie.metadata.index.column.stats.enable' = 'true')
            partitioned by (region) location '{path}'""")
        for sql, _ in STEPS:
            spark.sql(sql.format(t=name))
        with open(os.path.join(work, "steps.jsonl"), "a") as f:
            f.write(json.dumps({
                "table": name,
                "steps": [{"op": s} for _, s in STEPS],
                "filters": [[["id", "=", "1"]], [["title", "=", "c3"]], [["note", "=", "n-a"]],
                            [["qty", ">", "100"]]],
                "written_by": "Apache Hudi 1.1.1 Spark bundle, Spark SQL (hoodie.schema.on.read.enable=true)",
                "options": {"hoodie.schema.on.read.enable": "true", "hoodie.parquet.small.file.limit": "0"},
            }) + "\n")
    spark.stop()


main()
