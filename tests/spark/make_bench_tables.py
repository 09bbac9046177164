#!/usr/bin/env python3
"""Write two benchmark Hudi tables (table version 9, Hudi 1.1.x Spark) into the cache.

    tests/spark/run.sh tests/spark/make_bench_tables.py [--rows 1000000] [--batches 32] [--only cow|mor]

Tables (default location ${HUDI_EDGE_CACHE:-~/.cache/hudi-edge}/tables/):
  bench_cow_v9  COPY_ON_WRITE, `--batches` bulk_insert commits
  bench_mor_v9  MERGE_ON_READ, the same inserts, then 2 upsert rounds (log files in every file
                group), then a delete of some keys; no compaction (inline/async off)

Data: record key `id` (long 0..rows-1), partition `region` (8 values, region = id % 8), ordering
field `ts`; `event_ts` (timestamp), `event_date`, `ts` all grow with `id`, and every batch is a
contiguous `id` range sorted by `event_ts`, so per-file min/max ranges on id/ts/event_ts/event_date
are tight (batches x 8 partitions file groups; 32 x 8 = 256 by default).
Metadata table: files, column_stats (all columns), partition_stats, record_index.

Resumable: progress is kept in <table>/../<table>.progress.json; an interrupted bulk_insert batch
is detected by looking its first id up in the table before it is re-run. A finished table is
skipped (only its stats are printed again).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

from hudi_spark import HUDI_1X, TABLES_DIR, get_spark

REGIONS = ["us-east", "us-west", "eu-central", "eu-west", "ap-south", "ap-east", "sa-east", "af-south"]
CATEGORIES = ["grocery", "travel", "fuel", "dining", "electronics", "health", "utilities"]
BASE_EPOCH = 1704067200  # 2024-01-01T00:00:00Z; event_ts = BASE + id * 30 s


def hudi_options(name: str, table_type: str, max_file_size: int = 8 * 1024 * 1024) -> dict:
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.table.ordering.fields": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        # file sizing: never pack new inserts into existing files -> one new file group per
        # (batch, partition)
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.parquet.max.file.size": str(max_file_size),
        "hoodie.bulkinsert.sort.mode": "NONE",
        "hoodie.bulkinsert.shuffle.parallelism": "8",
        "hoodie.upsert.shuffle.parallelism": "8",
        "hoodie.insert.shuffle.parallelism": "8",
        "hoodie.delete.shuffle.parallelism": "8",
        # metadata table and its indexes
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.column.stats.max.columns.to.index": "64",
        "hoodie.metadata.index.partition.stats.enable": "true",
        "hoodie.metadata.global.record.level.index.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.index.type": "GLOBAL_RECORD_LEVEL_INDEX",
        # MOR: keep the log files (no compaction of the data table)
        "hoodie.compact.inline": "false",
        "hoodie.compact.schedule.inline": "false",
        "hoodie.datasource.compaction.async.enable": "false",
        "hoodie.clustering.inline": "false",
        "hoodie.clustering.async.enabled": "false",
        "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
        # On a loaded 2-core machine the heartbeat thread can miss its beats and the commit is
        # then aborted as if its writer had died.
        "hoodie.client.heartbeat.tolerable.misses": "20",
    }


def gen_rows(spark, start: int, end: int, version: int = 0):
    """Deterministic rows for ids [start, end). version>0 gives updated values for the same keys."""
    from pyspark.sql import functions as F
    df = spark.range(start, end, 1, numPartitions=4).withColumnRenamed("id", "id")
    h = F.xxhash64(F.col("id"), F.lit(version))
    regions = F.array(*[F.lit(r) for r in REGIONS])
    cats = F.array(*[F.lit(c) for c in CATEGORIES])
    df = df.select(
        F.col("id").cast("long").alias("id"),
        (F.lit(1_000_000_000_000) + F.col("id") + F.lit(version) * F.lit(10_000_000)).cast("long").alias("ts"),
        F.timestamp_seconds(F.lit(BASE_EPOCH) + F.col("id") * 30).alias("event_ts"),
        F.to_date(F.timestamp_seconds(F.lit(BASE_EPOCH) + F.col("id") * 30)).alias("event_date"),
        ((F.abs(h) % F.lit(10_000_000)) / F.lit(100)).cast("decimal(12,2)").alias("amount"),
        (F.abs(h) % 1000).cast("int").alias("qty"),
        ((F.abs(h) % 1_000_000) / F.lit(1_000_000.0)).cast("double").alias("score"),
        F.concat(F.lit("cust_"), F.lpad((F.col("id") * 7919 % 100_000).cast("string"), 6, "0"),
                 F.lit("_v"), F.lit(str(version))).alias("customer"),
        F.element_at(cats, (F.abs(h) % len(CATEGORIES)).cast("int") + 1).alias("category"),
        ((F.abs(h) % 3) == 0).alias("is_flagged"),
        F.element_at(regions, (F.col("id") % len(REGIONS)).cast("int") + 1).alias("region"),
    )
    return df


def write(df, path: str, opts: dict, op: str, mode: str = "append"):
    o = dict(opts)
    o["hoodie.datasource.write.operation"] = op
    df.write.format("hudi").options(**o).mode(mode).save(path)


def load_progress(p: Path) -> dict:
    return json.loads(p.read_text()) if p.exists() else {"steps": {}, "done": False}


def save_progress(p: Path, prog: dict):
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(prog, indent=1))
    tmp.replace(p)


def table_stats(path: Path) -> dict:
    """File groups / base files / log files from a listing (all versions on disk)."""
    base_re = re.compile(r"^([0-9a-f\-]+-\d+)_[^_]+_(\d+)\.parquet$")
    log_re = re.compile(r"^\.([0-9a-f\-]+-\d+)_(\d+)\.log\.(\d+)_")
    fgs, base, logs, size = set(), 0, 0, 0
    per_part = {}
    for part in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        pf = set()
        for f in part.iterdir():
            m = base_re.match(f.name)
            if m:
                base += 1
                pf.add(m.group(1))
                size += f.stat().st_size
                continue
            m = log_re.match(f.name)
            if m:
                logs += 1
                pf.add(m.group(1))
                size += f.stat().st_size
        per_part[part.name] = len(pf)
        fgs |= {(part.name, x) for x in pf}
    mdt = path / ".hoodie" / "metadata"
    mdt_parts = sorted(p.name for p in mdt.iterdir() if p.is_dir() and not p.name.startswith(".")) if mdt.exists() else []
    props = {}
    for line in (path / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            props[k] = v
    tl = path / ".hoodie" / "timeline"
    completed = sorted(f.name for f in tl.iterdir() if f.is_file() and re.match(r"^\d+_\d+\.\w+$", f.name)) if tl.exists() else []
    hist = tl / "history"
    return {
        "file_groups": len(fgs),
        "file_groups_per_partition": per_part,
        "base_files": base,
        "log_files": logs,
        "data_bytes": size,
        "mdt_partitions_on_disk": mdt_parts,
        "hoodie.table.metadata.partitions": props.get("hoodie.table.metadata.partitions"),
        "hoodie.table.version": props.get("hoodie.table.version"),
        "active_completed_instants": len(completed),
        "history_files": sorted(f.name for f in hist.iterdir()) if hist.exists() else [],
    }


def build(spark, kind: str, rows: int, batches: int, root: Path, max_file_size: int) -> dict:
    name = f"bench_{kind}_v9"
    path = root / name
    prog_path = root / f"{name}.progress.json"
    prog = load_progress(prog_path)
    table_type = "COPY_ON_WRITE" if kind == "cow" else "MERGE_ON_READ"
    opts = hudi_options(name, table_type, max_file_size)
    if not path.exists() and prog["steps"]:
        prog = {"steps": {}, "done": False}  # table was removed: start over
    t_table = time.time()
    if prog.get("done"):
        print(f"[{name}] already complete at {path}; skipping writes", flush=True)
    else:
        per = (rows + batches - 1) // batches
        for b in range(batches):
            step = f"bulk_insert_{b:03d}"
            if step in prog["steps"]:
                continue
            lo, hi = b * per, min(rows, (b + 1) * per)
            if lo >= hi:
                break
            if path.exists() and (path / ".hoodie" / "hoodie.properties").exists():
                # interrupted after the commit but before saving progress?
                n = (spark.read.format("hudi").option("hoodie.metadata.enable", "true")
                     .load(str(path)).where(f"id = {lo}").count())
                if n:
                    print(f"[{name}] {step} already in table, marking done", flush=True)
                    prog["steps"][step] = {"seconds": None}
                    save_progress(prog_path, prog)
                    continue
            t = time.time()
            df = gen_rows(spark, lo, hi).repartition(len(REGIONS), "region").sortWithinPartitions("region", "event_ts")
            write(df, str(path), opts, "bulk_insert", mode="append")
            dt = time.time() - t
            prog["steps"][step] = {"seconds": round(dt, 1), "rows": hi - lo}
            save_progress(prog_path, prog)
            print(f"[{name}] {step}: ids [{lo},{hi}) {dt:.1f}s", flush=True)
        if kind == "mor":
            # upsert round 1: a hash-chosen 25% of the keys (spread over all file groups);
            # round 2: another hash-chosen 10% (partly overlapping round 1)
            for step, where, ver in (("upsert_1", "pmod(xxhash64(id, 41), 4) = 0", 1),
                                     ("upsert_2", "pmod(xxhash64(id, 42), 10) = 0", 2)):
                if step in prog["steps"]:
                    continue
                t = time.time()
                df = gen_rows(spark, 0, rows, version=ver).where(where)
                n = df.count()
                write(df, str(path), opts, "upsert")
                dt = time.time() - t
                prog["steps"][step] = {"seconds": round(dt, 1), "rows": n, "where": where}
                save_progress(prog_path, prog)
                print(f"[{name}] {step}: {n} rows ({where}) {dt:.1f}s", flush=True)
            step = "delete_1"
            if step not in prog["steps"]:
                t = time.time()
                where = "pmod(xxhash64(id, 43), 100) = 0"  # ~1% of the keys
                df = gen_rows(spark, 0, rows, version=3).where(where)
                n = df.count()
                write(df, str(path), opts, "delete")
                dt = time.time() - t
                prog["steps"][step] = {"seconds": round(dt, 1), "rows": n, "where": where}
                save_progress(prog_path, prog)
                print(f"[{name}] {step}: {n} keys ({where}) {dt:.1f}s", flush=True)
        prog["done"] = True
        save_progress(prog_path, prog)
    write_seconds = sum((s.get("seconds") or 0) for s in prog["steps"].values())
    t = time.time()
    cnt = spark.read.format("hudi").load(str(path)).count()
    count_s = time.time() - t
    stats = table_stats(path)
    stats.update({"table": name, "path": str(path), "rows": cnt, "count_seconds": round(count_s, 1),
                  "write_seconds_total": round(write_seconds, 1), "steps": prog["steps"],
                  "this_run_seconds": round(time.time() - t_table, 1)})
    if kind == "mor":
        t = time.time()
        ro = (spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized")
              .load(str(path)).count())
        stats["read_optimized_rows"] = ro
        stats["ro_count_seconds"] = round(time.time() - t, 1)
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batches", type=int, default=32)
    ap.add_argument("--only", choices=["cow", "mor"])
    ap.add_argument("--out", default=str(TABLES_DIR))
    # A smaller size rolls each (batch, partition) over into several file groups with adjacent
    # id ranges: more file groups for the same data (issue 14's 10x planning table).
    ap.add_argument("--max-file-size", type=int, default=8 * 1024 * 1024)
    a = ap.parse_args()
    root = Path(a.out)
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    spark = get_spark(HUDI_1X, app="make_bench_tables")
    print(f"spark started in {time.time() - t0:.1f}s; writing to {root}", flush=True)
    summary = {}
    for kind in (["cow", "mor"] if not a.only else [a.only]):
        s = build(spark, kind, a.rows, a.batches, root, a.max_file_size)
        summary[s["table"]] = s
        brief = {k: s[k] for k in ("rows", "file_groups", "base_files", "log_files", "data_bytes",
                                   "mdt_partitions_on_disk", "write_seconds_total", "this_run_seconds")}
        print(f"[{s['table']}] {json.dumps(brief)}", flush=True)
    summary["_total_seconds_this_run"] = round(time.time() - t0, 1)
    out = root / "bench_summary.json"
    old = json.loads(out.read_text()) if out.exists() else {}
    old.update(summary)
    out.write_text(json.dumps(old, indent=1))
    print(f"summary -> {out}  (total this run {time.time() - t0:.1f}s)", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
