#!/usr/bin/env python3
"""Small Hudi tables whose timelines have ARCHIVED instants, plus expected results from Hudi Spark.

    tests/spark/run.sh tests/spark/make_archive_fixtures.py            # all tables
    tests/spark/run.sh tests/spark/make_archive_fixtures.py --only v9_archive_cow
    tests/spark/run.sh tests/spark/make_archive_fixtures.py --force    # rebuild existing ones
    tests/spark/run.sh tests/spark/make_archive_fixtures.py --reread   # only re-read the built tables

Tables (each written by its own Spark process, because a JVM can hold one Hudi bundle only):
  v9_archive_cow, v9_archive_mor   Hudi 1.1.x, table version 9: archived instants in the LSM
                                   timeline .hoodie/timeline/history/ (parquet + manifest_N + _version_)
  v6_archive_cow, v6_archive_mor   Hudi 0.15.0, table version 6: archived instants in
                                   .hoodie/archived/.commits_.archive.N_*
  v9_archive_noclean_cow/_mor, v6_archive_noclean_cow
                                   the same with the cleaner off (hoodie.clean.automatic=false), so
                                   every file slice stays and time travel to archived instants has
                                   data (with the cleaner on, Hudi refuses: "Cleaner cleaned up the
                                   timestamp of interest")

Output into tests/data/generated/ (for each NAME):
  NAME.zip   one top folder NAME = the table base path (Hadoop .crc side files left out)
  NAME.sql   the Spark SQL that made it (SET lines + CREATE TABLE + DML + procedures)
  NAME.json  expected results read back with Hudi Spark itself (same bundle that wrote the table):
             timeline files (active + archived), completed instants (active + archived),
             latest snapshot, time travel as of every completed commit, incremental queries
             between consecutive commits, read_optimized for MOR. Values encoded like
             shared/fixtures/expected (see hudi_spark.encode_value); rows sorted by record key.
Tables are built under ${HUDI_EDGE_CACHE}/tables/archive_fixtures/ first.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hudi_spark import (HUDI_0X, HUDI_1X, TABLES_DIR, active_completed_instants,  # noqa: E402
                        archived_instants, get_spark, list_timeline, read_properties, reader,
                        rows_to_json)

OUT_DIR = HERE.parent / "data" / "generated"
WORK_DIR = TABLES_DIR / "archive_fixtures"

# name -> (Hudi version, table type, session settings that differ from ARCHIVE_SETTINGS)
NO_CLEAN = {"hoodie.clean.automatic": "false"}
TABLES = {
    "v9_archive_cow": (HUDI_1X, "cow", {}),
    "v9_archive_mor": (HUDI_1X, "mor", {}),
    "v6_archive_cow": (HUDI_0X, "cow", {}),
    "v6_archive_mor": (HUDI_0X, "mor", {}),
    # cleaner off: every file slice stays, so time travel to archived instants has data to read
    "v9_archive_noclean_cow": (HUDI_1X, "cow", NO_CLEAN),
    "v9_archive_noclean_mor": (HUDI_1X, "mor", NO_CLEAN),
    "v6_archive_noclean_cow": (HUDI_0X, "cow", NO_CLEAN),
}
COMMIT_ACTIONS = {"commit", "deltacommit", "replacecommit"}

# Session settings: aggressive archival so that most instants leave the active timeline.
ARCHIVE_SETTINGS = {
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.clean.automatic": "true",
    "hoodie.archive.automatic": "true",
    "hoodie.commits.archival.batch": "2",
    # data-table archival never passes the metadata table's latest compaction: compact it often
    "hoodie.metadata.compact.max.delta.commits": "2",
    # 1.x LSM timeline: compact L0 files into L1 after 3 files
    "hoodie.timeline.compaction.batch.size": "3",
    # keep parquet files small (the bloom filter in the footer is sized by this)
    "hoodie.index.bloom.num_entries": "100",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.compact.inline": "false",
    "hoodie.compact.schedule.inline": "false",
    "hoodie.clustering.inline": "false",
    "hoodie.clustering.async.enabled": "false",
    # keep the metadata table small: one file group per MDT partition
    "hoodie.metadata.record.index.min.filegroup.count": "1",
    "hoodie.metadata.record.index.max.filegroup.count": "1",
    "hoodie.metadata.global.record.level.index.min.filegroup.count": "1",
    "hoodie.metadata.global.record.level.index.max.filegroup.count": "1",
}

PARTS = ["p1", "p2", "p3"]


def sql_lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


def row(i: int, gen: int = 0) -> str:
    """One deterministic row as a SQL tuple (column order of the CREATE TABLE)."""
    key = f"id-{i:03d}"
    name = None if i % 11 == 0 else f"name_{i}_{gen}"
    qty = (i * 37 + gen) % 100
    big = 10_000_000_000 + i * 1_000_003 + gen
    price = round(i * 1.25 + gen * 0.5, 2)
    amount = f"{(i * 101 + gen * 7) % 100000 / 100:.2f}"
    d = (dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat()
    t = (dt.datetime(2024, 1, 1, 0, 0, 0) + dt.timedelta(hours=i, seconds=gen, microseconds=i * 1001)
         ).strftime("%Y-%m-%d %H:%M:%S.%f")
    flag = (i + gen) % 2 == 0
    ts = 1000 + i + gen * 1000
    part = PARTS[i % 3]
    return (f"({sql_lit(key)}, {sql_lit(name)}, {qty}, {big}L, {price}D, CAST({amount} AS DECIMAL(12,2)), "
            f"DATE '{d}', TIMESTAMP '{t}', {sql_lit(flag)}, {ts}L, {sql_lit(part)})")


def ops_for(name: str, kind: str, hudi_version: str, location: str, overrides: dict) -> list[str]:
    props = {
        "type": kind,
        "primaryKey": "id",
        "preCombineField": "ts",
        "hoodie.metadata.enable": "true",
        # column_stats/partition_stats off: they are not what these fixtures test, and they
        # would push the zips past 1 MB (the benchmark tables have them)
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.metadata.index.partition.stats.enable": "false",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.index.bloom.num_entries": "100",
    }
    if hudi_version.startswith("1."):
        props["hoodie.metadata.record.index.enable"] = "true"
    tp = ",\n    ".join(f"'{k}' = '{v}'" if "." in k else f"{k} = '{v}'" for k, v in props.items())
    ops = [f"SET {k}={v}" for k, v in dict(ARCHIVE_SETTINGS, **overrides).items()]
    ops.append(f"""CREATE TABLE {name} (
    id         STRING,
    name       STRING,
    qty        INT,
    big_num    BIGINT,
    price      DOUBLE,
    amount     DECIMAL(12,2),
    event_date DATE,
    event_ts   TIMESTAMP,
    flag       BOOLEAN,
    ts         BIGINT,
    part       STRING
) USING HUDI
PARTITIONED BY (part)
LOCATION '{location}'
TBLPROPERTIES (
    {tp}
)""")

    def ins(a, b, gen=0):
        return f"INSERT INTO {name} VALUES\n  " + ",\n  ".join(row(i, gen) for i in range(a, b + 1))

    ops += [
        ins(1, 12),
        ins(13, 24),
        f"UPDATE {name} SET price = price + 100, ts = ts + 100 WHERE id IN ('id-001', 'id-013', 'id-020')",
        ins(25, 30),
        f"DELETE FROM {name} WHERE id IN ('id-002', 'id-014')",
        f"UPDATE {name} SET name = concat(coalesce(name, 'null'), '-u'), ts = ts + 200 WHERE part = 'p2'",
    ]
    if kind == "mor":
        ops += [f"CALL run_compaction(op => 'schedule', table => '{name}')",
                f"CALL run_compaction(op => 'run', table => '{name}')"]
    ops += [
        f"""MERGE INTO {name} t USING (
  SELECT * FROM VALUES
  {row(3, 5)},
  {row(16, 5)},
  {row(31, 5)},
  {row(32, 5)}
  AS s(id, name, qty, big_num, price, amount, event_date, event_ts, flag, ts, part)
) s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *""",
        f"DELETE FROM {name} WHERE qty >= 90",
        ins(33, 38),
        f"UPDATE {name} SET flag = NOT flag, amount = amount + 1.5, ts = ts + 300 WHERE id IN ('id-004', 'id-033')",
        ins(39, 42),
        f"DELETE FROM {name} WHERE id = 'id-039'",
    ]
    return ops


def zip_table(table_dir: Path, zip_path: Path):
    if zip_path.exists():
        zip_path.unlink()
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p in sorted(table_dir.rglob("*")):
            if p.name.endswith(".crc"):
                continue
            arc = Path(table_dir.name) / p.relative_to(table_dir)
            if p.is_dir():
                z.writestr(str(arc) + "/", "")
            else:
                z.write(p, str(arc))


def collect(df):
    return rows_to_json(df)


def safe_read(fn):
    try:
        df, opts = fn()
        rows = collect(df)
        return {"options": opts, "count": len(rows), "keys": [r.get("_hoodie_record_key") for r in rows],
                "rows": rows}
    except Exception as e:  # record Hudi's own failure instead of dying
        msg = str(e).strip().splitlines()
        return {"error": (msg[0] if msg else repr(e))[:2000]}


def write_table(name, hudi_version, kind, overrides, table_dir: Path, sql_path: Path):
    t0 = time.time()
    spark = get_spark(hudi_version, app=f"archive-{name}", driver_memory="3g")
    ops = ops_for(name, kind, hudi_version, str(table_dir), overrides)
    op_log = []
    seen = set()
    for i, stmt in enumerate(ops):
        t = time.time()
        spark.sql(stmt).collect()
        if stmt.startswith("SET "):
            continue
        new = []
        if table_dir.exists() and (table_dir / ".hoodie" / "hoodie.properties").exists():
            for inst in active_completed_instants(str(table_dir)):
                k = (inst["requested_time"], inst["action"])
                if k not in seen:
                    seen.add(k)
                    new.append(inst)
        op_log.append({"step": len(op_log), "sql": stmt.split("\n")[0][:200], "seconds": round(time.time() - t, 1),
                       "new_completed_instants": new})
        print(f"[{name}] op {len(op_log) - 1}: {stmt.splitlines()[0][:80]} -> "
              f"{[(n['requested_time'], n['action']) for n in new]} ({time.time() - t:.1f}s)", flush=True)
    write_seconds = time.time() - t0
    sql_text = f"-- {name}: written with Apache Hudi {hudi_version} (Spark {spark.version}, pyspark from PyPI)\n"
    sql_text += f"-- generated by tests/spark/make_archive_fixtures.py; LOCATION is the build directory\n\n"
    sql_text += ";\n\n".join(ops) + ";\n"
    sql_path.write_text(sql_text)
    return spark, op_log, round(write_seconds, 1)



def build_one(name: str, force: bool, reread: bool = False):
    hudi_version, kind, overrides = TABLES[name]
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    zip_path, sql_path, json_path = (OUT_DIR / f"{name}.{e}" for e in ("zip", "sql", "json"))
    table_dir = WORK_DIR / name
    ops_path = WORK_DIR / f"{name}.ops.json"
    if reread:
        # only re-read an already built table (kept in WORK_DIR) and rewrite NAME.json
        if not (table_dir / ".hoodie" / "hoodie.properties").exists():
            sys.exit(f"[{name}] --reread: no table at {table_dir}")
        if ops_path.exists():
            saved = json.loads(ops_path.read_text())
        else:  # older build: take the op log from the expected JSON
            old = json.loads(json_path.read_text())
            saved = {"ops": old["ops"], "write_seconds": old["seconds"]["write"]}
        op_log, write_seconds = saved["ops"], saved["write_seconds"]
        spark = get_spark(hudi_version, app=f"archive-{name}", driver_memory="3g")
    else:
        if not force and zip_path.exists() and json_path.exists() and sql_path.exists():
            print(f"[{name}] exists in {OUT_DIR}; skipping (use --force to rebuild)", flush=True)
            return
        if table_dir.exists():
            shutil.rmtree(table_dir)
        spark, op_log, write_seconds = write_table(name, hudi_version, kind, overrides, table_dir, sql_path)
        ops_path.write_text(json.dumps({"ops": op_log, "write_seconds": write_seconds}, indent=1))

    # ---- read back with Hudi Spark -----------------------------------------------------------
    t1 = time.time()
    path = str(table_dir)
    props = read_properties(path)
    tver = int(props["hoodie.table.version"])
    active = active_completed_instants(path)
    try:
        archived = archived_instants(spark, path)
        arch_err = None
    except Exception as e:
        archived, arch_err = [], str(e).splitlines()[0][:2000]
    # all completed instants, active + archived (dedupe by requested time + action)
    allc = {}
    for src, lst in (("archived", archived), ("active", active)):
        for x in lst:
            if x.get("state") and "COMPLETED" not in x["state"]:
                continue
            allc[(x["requested_time"], x["action"])] = dict(x, timeline=src)
    # completion times for v6 archived/active instants are unknown from names; use op log order
    logged = {(n["requested_time"], n["action"]): n for o in op_log for n in o["new_completed_instants"]}
    for k, v in allc.items():
        if v.get("completion_time") is None and k in logged:
            v["completion_time"] = logged[k].get("completion_time")
    instants = sorted(allc.values(), key=lambda x: x["requested_time"])
    commits = [x for x in instants if x["action"] in COMMIT_ACTIONS]
    # ops that produced each commit
    for c in commits:
        for o in op_log:
            if any(n["requested_time"] == c["requested_time"] for n in o["new_completed_instants"]):
                c["op_step"] = o["step"]
                c["op_sql"] = o["sql"]

    result = {
        "table_name": name,
        "written_by": f"Apache Hudi {hudi_version} Spark bundle (hudi-spark3.5-bundle_2.12), Spark {spark.version}",
        "read_back_by": f"the same bundle, spark.read.format('hudi')",
        "table_version": tver,
        "table_type": props.get("hoodie.table.type"),
        "hoodie_properties": props,
        "sql_file": sql_path.name,
        "session_settings": dict(ARCHIVE_SETTINGS, **overrides),
        "ops": op_log,
        "timeline_files": list_timeline(path),
        "archived_instants_read_by_hudi": archived,
        "archived_read_error": arch_err,
        "completed_instants": instants,
        "commits": commits,
        "value_encoding": "decimal -> string with scale; timestamp -> ISO-8601 UTC with 6 fraction digits + Z; "
                          "date -> YYYY-MM-DD; rows sorted by (_hoodie_record_key, _hoodie_partition_path, row json)",
    }
    result["snapshot"] = safe_read(lambda: reader(spark, path))
    if kind == "mor":
        result["read_optimized"] = safe_read(lambda: reader(spark, path, "read_optimized"))
    tt = []
    for c in commits:
        r = safe_read(lambda: reader(spark, path, as_of=c["requested_time"]))
        tt.append(dict({"as_of_instant": c["requested_time"], "action": c["action"], "timeline": c["timeline"]}, **r))
    result["time_travel"] = tt
    # incremental between consecutive commits
    if tver >= 8:
        sem = ("Hudi 1.x: begin/end instanttime are COMPLETION times; range is (begin, end]; "
               "begin of the first range is '000'")
        bound = "completion_time"
    else:
        sem = "Hudi 0.x: begin/end instanttime are REQUESTED instant times; range is (begin, end]; first begin '000'"
        bound = "requested_time"
    result["incremental_semantics"] = sem
    inc = []
    prev = "000"
    for c in commits:
        end = c.get(bound) or c["requested_time"]
        r = safe_read(lambda: reader(spark, path, "incremental", begin=prev, end=end))
        inc.append(dict({"begin": prev, "end": end, "commit": c["requested_time"], "action": c["action"],
                         "timeline": c["timeline"]}, **r))
        prev = end
    result["incremental"] = inc
    if tver < 8:
        # Hudi 0.x answers ranges that start in the archived timeline with nothing unless the
        # full-table-scan fallback is on; record that answer too
        fb = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
        inc2 = []
        prev = "000"
        for c in commits:
            end = c["requested_time"]
            r = safe_read(lambda: reader(spark, path, "incremental", begin=prev, end=end, extra=fb))
            inc2.append(dict({"begin": prev, "end": end, "commit": c["requested_time"], "action": c["action"],
                              "timeline": c["timeline"]}, **r))
            prev = end
        result["incremental_with_fulltablescan_fallback"] = inc2
    read_seconds = time.time() - t1
    result["seconds"] = {"write": write_seconds, "read_back": round(read_seconds, 1)}
    spark.stop()

    json_path.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    zip_table(table_dir, zip_path)
    n_arch = sum(1 for c in commits if c["timeline"] == "archived")
    print(f"[{name}] done: table v{tver}, {len(commits)} commits ({n_arch} archived), "
          f"snapshot {result['snapshot'].get('count')} rows, zip {zip_path.stat().st_size} bytes, "
          f"write {write_seconds:.0f}s, read-back {read_seconds:.0f}s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(TABLES), action="append")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--reread", action="store_true",
                    help="do not write: re-read the tables already built in the cache and rewrite NAME.json/zip")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    names = a.only or list(TABLES)
    if a.in_process:
        for n in names:
            build_one(n, a.force, a.reread)
        return
    # one child process per table: a JVM can hold one Hudi bundle only
    rc = 0
    for n in names:
        cmd = ([sys.executable, __file__, "--in-process", "--only", n] + (["--force"] if a.force else [])
               + (["--reread"] if a.reread else []))
        t = time.time()
        r = subprocess.run(cmd)
        print(f"== {n}: exit {r.returncode} in {time.time() - t:.0f}s", flush=True)
        rc = rc or r.returncode
    sys.exit(rc)


if __name__ == "__main__":
    main()
