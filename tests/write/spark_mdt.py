#!/usr/bin/env python3
"""Apache Hudi Spark 1.1.1 against a metadata table (MDT) hudi-edge built: reads with the MDT and
data skipping on, Hudi's own MDT classes and procedures, the MDT read as a table, and upserts.
Dev-only helper of tests/write/spark_mdt.sh; one JVM runs the actions in order:

    tests/spark/run.sh tests/write/spark_mdt.py TABLE PREFIX ACTION...

ACTION:
  check          snapshot (hoodie.metadata.enable=true, hoodie.enable.data.skipping=true) to
                 PREFIX.checkN.rows.jsonl, each --filter's rows to PREFIX.checkN.fI.jsonl, the
                 MDT checks to PREFIX.checkN.report.json (N counts the checks of this run, from 1)
  upsert         a Spark upsert (metadata on, the table's MDT partitions and its record index
                 as write configs): 3 updated keys, a new key in an existing partition and, when
                 partitioned, one in a new partition
  make-nomdt     write TABLE anew: partitioned MOR, hoodie.metadata.enable=false; insert, upsert
                 (log files), delete
  make-filesonly write TABLE anew: partitioned COW, MDT with `files` only; insert, upsert, delete
  upsert-build-mdt  the upsert on a table without an MDT, Spark building files, column_stats
                 and partition_stats
--filter SPARK_SQL (repeatable) filtered reads with data skipping on (and, for the files read,
once more with it off).
The MDT checks (HoodieMetadataTableValidator, hudi-utilities, is not on Maven Central here, so
its checks are redone with the classes it uses, from the Spark bundle):
  * procedures: show_metadata_table_partitions / _files / _stats / _column_stats,
    validate_metadata_table_files;
  * HoodieBackedTableMetadata: partitions and files (name, size) vs the storage listing
    (--validate-all-file-groups' base), latest file slices and all file groups of a view on
    the MDT vs a listing-based view (--validate-latest-file-slices, --validate-all-file-groups),
    column stats of every latest file vs the parquet footers' (--validate-all-column-stats),
    record index locations of every live key and the entry count (--validate-record-index-*);
  * the MDT read as a Hudi table by Spark (key, type, payload columns): `files` records vs the
    data files on disk and the latest commit's write stats (sizes), a column_stats entry per
    latest file and column, partition_stats covering the latest files' stats, record_index
    keys == live keys with their partition and file id.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "spark"))
sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark import HUDI_1X, get_spark, read_properties, reader, rows_to_json  # noqa: E402
from spark_after import write_options  # noqa: E402

COLUMNS = ["id", "ts", "region", "v"]


def err(e: Exception) -> str:
    """The Java exception's first lines (py4j) or the Python one."""
    s = str(e)
    lines = [l for l in s.splitlines() if l.strip() and not l.strip().startswith("at ")]
    return " | ".join(lines[:4])[:800]


def table_partitions(path):
    return [p for p in read_properties(path).get("hoodie.table.metadata.partitions", "").split(",") if p]


def read_opts(path):
    opts = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true"}
    if "record_index" in table_partitions(path):
        opts["hoodie.metadata.record.index.enable"] = "true"
    return opts


def files_read(df):
    """Collected rows and the files the scan read (FileSourceScanExec's numFiles; AQE is off)."""
    rows = rows_to_json(df)
    n = None
    try:
        leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
        for i in range(leaves.size()):
            o = leaves.apply(i).metrics().get("numFiles")
            if o.isDefined():
                n = (n or 0) + int(o.get().value())
    except Exception as e:  # noqa: BLE001
        n = "n/a: " + err(e)
    return rows, n


def file_id_of(name: str) -> str:
    """File id from a base/log file name or a bare file id (MOR rows merged from logs)."""
    if name.startswith("."):
        return name[1:].split("_")[0]
    return name.split("_")[0]


def disk_files(path):
    """{partition: {file name: size}} of the data files under the base path."""
    out = {}
    for root, dirs, files in os.walk(path):
        rel = os.path.relpath(root, path)
        if rel == ".":
            dirs[:] = [d for d in dirs if d != ".hoodie"]
        if ".hoodie_partition_metadata" not in files:
            continue
        part = "" if rel == "." else rel
        for f in files:
            if f.endswith(".crc") or f.startswith(".hoodie_partition_metadata"):
                continue
            if f.endswith(".parquet") or ".log." in f:
                out.setdefault(part, {})[f] = os.path.getsize(os.path.join(root, f))
    return out


def unwrap(v):
    """An Avro value wrapper ({"value": x}) from Java, as Python."""
    if v is None:
        return None
    s = str(v)
    try:
        d = json.loads(s)
        return d.get("value") if isinstance(d, dict) else d
    except Exception:  # noqa: BLE001
        return s


def unwrap_java(v):
    """A Java Comparable from HoodieColumnRangeMetadata, as Python."""
    if v is None:
        return None
    if isinstance(v, (int, float, str, bool)):
        return v
    s = str(v)
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def spark_value(wrapper):
    """A column_stats min/max union row read by Spark, as Python."""
    if wrapper is None:
        return None
    for k, v in wrapper.asDict().items():
        if v is not None and k != "member12":
            return v["value"]
    return None


def data_stats(file_path, columns):
    """Per column (min, max, null count, value count) computed from a parquet file's values."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    t = pq.read_table(file_path)
    out = {}
    for c in columns:
        if c not in t.column_names:
            continue
        col = t.column(c)
        mm = pc.min_max(col).as_py() if len(col) else {"min": None, "max": None}
        out[c] = (mm["min"], mm["max"], col.null_count, len(col))
    return out


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))
        except (TypeError, ValueError):
            return False
    return a == b


class Checker:
    def __init__(self, spark, path, prefix, filters):
        self.spark, self.path, self.prefix, self.filters = spark, path, prefix, filters
        self.jvm = spark._jvm
        self.n = 0

    # -- Java objects -------------------------------------------------------------------
    def java(self):
        jvm = self.jvm
        sconf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(self.spark._jsc.hadoopConfiguration())
        engine = jvm.org.apache.hudi.common.engine.HoodieLocalEngineContext(sconf)
        storage = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(self.path, sconf)
        mcfg = jvm.org.apache.hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
        md = jvm.org.apache.hudi.metadata.HoodieBackedTableMetadata(engine, storage, mcfg, self.path)
        mc = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(sconf).setBasePath(self.path).build()
        return engine, md, mc

    def jlist(self, items):
        a = self.jvm.java.util.ArrayList()
        for x in items:
            a.add(x)
        return a

    # -- one check ----------------------------------------------------------------------
    def check(self):
        self.n += 1
        tag = f"{self.prefix}.check{self.n}"
        rep = {"table": self.path, "metadata_partitions": table_partitions(self.path)}
        opts = read_opts(self.path)
        rep["read_options"] = opts
        try:
            df, _ = reader(self.spark, self.path, "snapshot", extra=opts)
            rows, nfiles = files_read(df)
            rep["rows"] = len(rows)
            rep["files_read_full_scan"] = nfiles
            with open(tag + ".rows.jsonl", "w") as f:
                for r in rows:
                    f.write(json.dumps(r, sort_keys=True) + "\n")
        except Exception as e:  # noqa: BLE001
            rep["read_error"] = err(e)
            rows = []
            open(tag + ".rows.jsonl", "w").close()
        rep["filters"] = []
        for i, flt in enumerate(self.filters):
            fr = {"filter": flt}
            try:
                df, _ = reader(self.spark, self.path, "snapshot", extra=opts)
                frows, fr["files_read_skipping_on"] = files_read(df.where(flt))
                fr["rows"] = len(frows)
                with open(f"{tag}.f{i}.jsonl", "w") as f:
                    for r in frows:
                        f.write(json.dumps(r, sort_keys=True) + "\n")
                off = dict(opts, **{"hoodie.enable.data.skipping": "false"})
                df2, _ = reader(self.spark, self.path, "snapshot", extra=off)
                orows, fr["files_read_skipping_off"] = files_read(df2.where(flt))
                fr["same_rows_as_skipping_off"] = ([json.dumps(r, sort_keys=True) for r in frows]
                                                   == [json.dumps(r, sort_keys=True) for r in orows])
            except Exception as e:  # noqa: BLE001
                fr["error"] = err(e)
                open(f"{tag}.f{i}.jsonl", "w").close()
            rep["filters"].append(fr)
        live = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], file_id_of(r["_hoodie_file_name"])) for r in rows}
        keys_twice = len(rows) - len(live)
        rep["keys_held_twice"] = keys_twice
        for name, fn in (("procedures", self.procedures), ("java", lambda: self.java_checks(live)),
                         ("mdt_as_table", lambda: self.table_checks(live))):
            try:
                rep[name] = fn()
            except Exception as e:  # noqa: BLE001
                rep[name] = {"error": err(e), "trace": traceback.format_exc()[-600:]}
        rep["problems"] = problems(rep)
        rep["findings"] = findings(rep)
        with open(tag + ".report.json", "w") as f:
            json.dump(rep, f, indent=1, sort_keys=True, default=str)
        print(json.dumps({"check": tag, "problems": rep["problems"], "findings": rep["findings"]}), file=sys.stderr)

    def procedures(self):
        p = self.path
        out = {}
        name = "mdt_" + uuid.uuid4().hex[:8]
        q = {
            "show_metadata_table_partitions": f"call show_metadata_table_partitions(path => '{p}')",
            "show_metadata_table_stats": f"call show_metadata_table_stats(path => '{p}')",
        }
        for k, sql in q.items():
            try:
                out[k] = [{a: str(b) for a, b in r.asDict().items()} for r in self.spark.sql(sql).collect()]
            except Exception as e:  # noqa: BLE001
                out[k] = {"error": err(e)}
        parts = [r["partition"] for r in out.get("show_metadata_table_partitions", []) if isinstance(r, dict) and "partition" in r]
        files = {}
        for part in parts or [""]:
            try:
                files[part] = sorted(r["file_path"] for r in self.spark.sql(
                    f"call show_metadata_table_files(path => '{p}', partition => '{part}')").collect())
            except Exception as e:  # noqa: BLE001
                files[part] = {"error": err(e)}
        out["show_metadata_table_files"] = files
        disk = disk_files(p)
        out["show_metadata_table_files_vs_disk"] = {
            part: ("same" if isinstance(v, list) and sorted(disk.get(part, {})) == v
                   else {"procedure_only": sorted(set(v) - set(disk.get(part, {}))) if isinstance(v, list) else v,
                         "disk_only": sorted(set(disk.get(part, {})) - set(v)) if isinstance(v, list) else None})
            for part, v in files.items()}
        try:
            self.spark.sql(f"create table if not exists {name} using hudi location '{p}'")
            rows = self.spark.sql(f"call validate_metadata_table_files(table => '{name}', verbose => true)").collect()
            rs = [{k.lower(): v for k, v in r.asDict().items()} for r in rows]
            bad = [r for r in rs if any(v is False for v in r.values())
                   or len({v for k, v in r.items() if "size" in k}) > 1]
            out["validate_metadata_table_files"] = {"rows": len(rs), "mismatches": bad[:10],
                                                    "sample": rs[0] if rs else None}
        except Exception as e:  # noqa: BLE001
            out["validate_metadata_table_files"] = {"error": err(e)}
        if "column_stats" in table_partitions(p):
            try:
                part = next((x for x in parts if x), "")
                cs = self.spark.sql(f"call show_metadata_table_column_stats(table => '{name}', partition => '{part}', targetColumns => 'ts,id')").collect()
                out["show_metadata_table_column_stats"] = {"partition": part, "rows": len(cs),
                                                           "sample": [{a: str(b) for a, b in r.asDict().items()} for r in cs[:2]]}
            except Exception as e:  # noqa: BLE001
                out["show_metadata_table_column_stats"] = {"error": err(e)}
        return out

    def java_checks(self, live):
        jvm = self.jvm
        engine, md, mc = self.java()
        out = {}
        disk = disk_files(self.path)
        parts = sorted(str(x) for x in md.getAllPartitionPaths())
        out["partitions"] = parts
        out["partitions_same_as_listing"] = sorted(disk) == sorted("" if x == "." else x for x in parts)
        file_diffs = {}
        mdt_files = {}
        for part in parts:
            sp = jvm.org.apache.hudi.storage.StoragePath(self.path if part in ("", ".") else self.path + "/" + part)
            got = {i.getPath().getName(): int(i.getLength()) for i in md.getAllFilesInPartition(sp)}
            mdt_files[part] = got
            want = disk.get("" if part == "." else part, {})
            if got != want:
                file_diffs[part] = {"mdt_only": sorted(set(got) - set(want)), "disk_only": sorted(set(want) - set(got)),
                                    "size_differs": {k: [got[k], want[k]] for k in set(got) & set(want) if got[k] != want[k]}}
        out["files_vs_disk"] = file_diffs or "same"
        # Latest commit's write stats vs the MDT's sizes.
        tl = mc.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
        last = tl.lastInstant().get()
        cm = tl.readCommitMetadata(last)
        stats = cm.getPartitionToWriteStats()
        latest = {}
        for part in stats.keySet():
            for ws in stats.get(part):
                latest[str(ws.getPath())] = int(ws.getFileSizeInBytes())
        bad = {}
        for pth, size in latest.items():
            part, _, fname = pth.rpartition("/")
            have = mdt_files.get(part, mdt_files.get(".", {}) if part == "" else {}).get(fname)
            if have != size:
                bad[pth] = {"commit_size": size, "mdt_size": have, "disk_size": disk.get(part, {}).get(fname)}
        out["latest_commit"] = {"instant": str(last.requestedTime()), "action": str(last.getAction()),
                                "files": len(latest), "mdt_size_mismatch": bad}
        # Views: on the MDT vs on a listing.
        v_md = jvm.org.apache.hudi.common.table.view.HoodieTableFileSystemView(md, mc, tl)
        v_fs = jvm.org.apache.hudi.common.table.view.HoodieTableFileSystemView.fileListingBasedFileSystemView(engine, mc, tl)

        def desc_slice(s):
            b = s.getBaseFile()
            base = [b.get().getFileName(), int(b.get().getFileSize())] if b.isPresent() else None
            logs = sorted([lf.getFileName(), int(lf.getFileSize())] for lf in s.getLogFiles().iterator())
            return {"file_id": s.getFileId(), "base_instant": s.getBaseInstantTime(), "base": base, "logs": logs}

        def it(stream):
            return list(stream.iterator())
        slice_diffs = {}
        group_diffs = {}
        latest_files = []  # (partition, file name, is_base)
        for part in parts:
            a = sorted((desc_slice(s) for s in it(v_md.getLatestFileSlices(part))), key=lambda d: d["file_id"])
            b = sorted((desc_slice(s) for s in it(v_fs.getLatestFileSlices(part))), key=lambda d: d["file_id"])
            if a != b:
                slice_diffs[part] = {"mdt_view": a, "listing_view": b}
            ga = sorted(str(g.getFileGroupId().getFileId()) + ":" + ",".join(sorted(str(s.getBaseInstantTime()) for s in it(g.getAllFileSlices())))
                        for g in it(v_md.getAllFileGroups(part)))
            gb = sorted(str(g.getFileGroupId().getFileId()) + ":" + ",".join(sorted(str(s.getBaseInstantTime()) for s in it(g.getAllFileSlices())))
                        for g in it(v_fs.getAllFileGroups(part)))
            if ga != gb:
                group_diffs[part] = {"mdt_view": ga, "listing_view": gb}
            for d in b:
                if d["base"]:
                    latest_files.append((part, d["base"][0], True))
                for lf in d["logs"]:
                    latest_files.append((part, lf[0], False))
        out["latest_file_slices_mdt_vs_listing"] = slice_diffs or "same"
        out["all_file_groups_mdt_vs_listing"] = group_diffs or "same"
        out["latest_files"] = len(latest_files)
        # Column stats of every latest file vs the parquet footer.
        if "column_stats" in table_partitions(self.path):
            cols = self.indexed_columns()
            pairs = self.jlist([jvm.org.apache.hudi.common.util.collection.Pair.of(p, f) for p, f, _ in latest_files])
            got = {}
            for c in cols:
                m = md.getColumnStats(pairs, c)
                for k in m.keySet():
                    s = m.get(k)
                    got[(str(k.getLeft()), str(k.getRight()), c)] = (
                        unwrap(s.getMinValue()), unwrap(s.getMaxValue()), int(s.getNullCount()), int(s.getValueCount()))
            missing_base, missing_log, wrong, footer_differs = [], [], [], []
            pu = jvm.org.apache.hudi.common.util.ParquetUtils()
            storage = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(self.path, mc.getStorageConf())
            for part, fname, is_base in latest_files:
                fpath = os.path.join(self.path, part, fname)
                actual = data_stats(fpath, cols) if is_base else {}
                # What the validator compares with: Hudi's reading of the parquet footer.
                footer = {}
                if is_base:
                    for r in pu.readColumnStatsFromMetadata(storage, jvm.org.apache.hudi.storage.StoragePath(fpath),
                                                            self.jlist(cols), jvm.org.apache.hudi.metadata.HoodieIndexVersion.V2):
                        footer[str(r.getColumnName())] = (unwrap_java(r.getMinValue()), unwrap_java(r.getMaxValue()),
                                                          int(r.getNullCount()), int(r.getValueCount()))
                for c in cols:
                    k = (part, fname, c)
                    if k not in got:
                        (missing_base if is_base else missing_log).append(f"{part}/{fname}:{c}")
                        continue
                    g = got[k]
                    if is_base and c in actual:
                        mn, mx, nulls, values = actual[c]
                        if not (close(g[0], mn) and close(g[1], mx) and g[2] == nulls and g[3] == values):
                            wrong.append({"file": f"{part}/{fname}", "column": c, "mdt": g, "data": [mn, mx, nulls, values]})
                    if is_base and c in footer:
                        f = footer[c]
                        if not (close(g[0], f[0]) and close(g[1], f[1]) and g[2] == f[2] and g[3] == f[3]):
                            footer_differs.append({"file": f"{part}/{fname}", "column": c, "mdt": g, "hudi_footer_stats": f,
                                                   "parquet_mr": self.parquet_mr_view(storage, fpath, c)})
            out["column_stats"] = {"columns": cols, "entries": len(got),
                                   "latest_base_files": sum(1 for x in latest_files if x[2]),
                                   "latest_log_files": sum(1 for x in latest_files if not x[2]),
                                   "missing_for_base_files": missing_base[:10], "missing_base_count": len(missing_base),
                                   "missing_for_log_files": missing_log[:10], "missing_log_count": len(missing_log),
                                   "differs_from_data": wrong[:10], "differs_count": len(wrong),
                                   "differs_from_hudi_footer_reading": footer_differs[:10],
                                   "footer_differs_count": len(footer_differs)}
        # Record index: every live key's location, and the entry count.
        if "record_index" in table_partitions(self.path):
            keys = sorted(live)
            locs = md.readRecordIndexLocationsWithKeys(jvm.org.apache.hudi.common.data.HoodieListData.eager(self.jlist(keys))).collectAsList()
            found = {str(p.getLeft()): (str(p.getRight().getPartitionPath()), str(p.getRight().getFileId())) for p in locs}
            missing = [k for k in keys if k not in found]
            wrong_loc = {k: {"index": found[k], "snapshot": live[k]} for k in keys
                         if k in found and found[k] != (live[k][0], live[k][1])}
            out["record_index"] = {"live_keys": len(keys), "found": len(found), "missing": missing[:10],
                                   "wrong_location": dict(list(wrong_loc.items())[:10]), "wrong_count": len(wrong_loc)}
        md.close()
        return out

    def parquet_mr_view(self, storage, fpath, column):
        """parquet-mr's view of a column chunk: its column order and statistics."""
        try:
            meta = self.jvm.org.apache.hudi.common.util.ParquetUtils.readMetadata(storage, self.jvm.org.apache.hudi.storage.StoragePath(fpath))
            for cc in meta.getBlocks().get(0).getColumns():
                if cc.getPath().toDotString() == column:
                    return {"column_order": str(cc.getPrimitiveType().columnOrder()), "statistics": str(cc.getStatistics()),
                            "created_by": str(meta.getFileMetaData().getCreatedBy())}
        except Exception as e:  # noqa: BLE001
            return {"error": err(e)}
        return None

    def indexed_columns(self):
        f = os.path.join(self.path, ".hoodie", ".index_defs", "index.json")
        try:
            return json.load(open(f))["indexDefinitions"]["column_stats"]["sourceFields"]
        except Exception:  # noqa: BLE001
            return ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key"] + COLUMNS

    def table_checks(self, live):
        """The MDT read as a Hudi table by Spark (key, type and payload columns)."""
        m = self.spark.read.format("hudi").load(self.path + "/.hoodie/metadata")
        recs = m.collect()
        out = {"records_by_type": {}}
        for r in recs:
            out["records_by_type"][str(r["type"])] = out["records_by_type"].get(str(r["type"]), 0) + 1
        disk = disk_files(self.path)
        # files: type 1 = the partition list, type 2 = a partition's files.
        plist = [r for r in recs if r["type"] == 1]
        parts = sorted(k for k, v in (plist[0]["filesystemMetadata"] or {}).items() if not v["isDeleted"]) if plist else []
        out["files_partition_list"] = parts
        out["files_partition_list_same_as_disk"] = sorted("" if p == "." else p for p in parts) == sorted(disk)
        diffs = {}
        for r in recs:
            if r["type"] != 2:
                continue
            part = "" if r["key"] == "." else r["key"]
            got = {k: v["size"] for k, v in (r["filesystemMetadata"] or {}).items() if not v["isDeleted"]}
            want = disk.get(part, {})
            if got != want:
                diffs[part] = {"mdt_only": sorted(set(got) - set(want)), "disk_only": sorted(set(want) - set(got)),
                               "size_differs": {k: [got[k], want[k]] for k in set(got) & set(want) if got[k] != want[k]}}
        for part in disk:
            if not any(r["type"] == 2 and ("" if r["key"] == "." else r["key"]) == part for r in recs):
                diffs[part] = "no files record"
        out["files_vs_disk"] = diffs or "same"
        mdt_parts = table_partitions(self.path)
        if "column_stats" in mdt_parts:
            cs = {}
            for r in recs:
                if r["type"] == 3 and r["ColumnStatsMetadata"] is not None and not r["ColumnStatsMetadata"]["isDeleted"]:
                    c = r["ColumnStatsMetadata"]
                    cs[(c["fileName"], c["columnName"])] = (spark_value(c["minValue"]), spark_value(c["maxValue"]))
            latest = self.latest_files_by_listing()
            cols = self.indexed_columns()
            miss_base = [f"{p}/{f}:{c}" for p, f, b in latest if b for c in cols if (f, c) not in cs]
            miss_log = [f"{p}/{f}:{c}" for p, f, b in latest if not b for c in cols if (f, c) not in cs]
            out["column_stats"] = {"entries": len(cs), "latest_files": len(latest),
                                   "missing_for_base_files": miss_base[:10], "missing_base_count": len(miss_base),
                                   "missing_for_log_files": miss_log[:10], "missing_log_count": len(miss_log)}
            if "partition_stats" in mdt_parts:
                ps = {}
                for r in recs:
                    if r["type"] == 6 and r["ColumnStatsMetadata"] is not None:
                        c = r["ColumnStatsMetadata"]
                        ps[(c["fileName"], c["columnName"])] = (spark_value(c["minValue"]), spark_value(c["maxValue"]))
                agg = {}
                for p, f, _ in latest:
                    for c in cols:
                        if (f, c) in cs and cs[(f, c)][0] is not None:
                            mn, mx = cs[(f, c)]
                            a = agg.get((p, c))
                            agg[(p, c)] = (mn, mx) if a is None else (min(a[0], mn), max(a[1], mx))
                missing, narrow, wider = [], [], []
                for (p, c), (mn, mx) in agg.items():
                    k = ("." if p == "" else p, c)
                    got = ps.get(k, ps.get((p, c)))
                    if got is None:
                        missing.append(f"{p}:{c}")
                    elif got[0] is None or got[0] > mn or got[1] < mx:
                        narrow.append({"partition": p, "column": c, "partition_stats": got, "latest_files": [mn, mx]})
                    elif (got[0], got[1]) != (mn, mx):
                        wider.append(f"{p}:{c}")
                out["partition_stats"] = {"entries": len(ps), "missing": missing[:10], "narrower_than_files": narrow[:10],
                                          "wider_than_files (allowed)": wider[:10]}
        if "record_index" in mdt_parts:
            idx = {}
            for r in recs:
                if r["type"] == 5 and r["recordIndexMetadata"] is not None:
                    x = r["recordIndexMetadata"]
                    if x["fileIdEncoding"] == 0:
                        u = uuid.UUID(int=((x["fileIdHighBits"] & (2**64 - 1)) << 64) | (x["fileIdLowBits"] & (2**64 - 1)))
                        fid = f"{u}-{x['fileIndex']}"
                    else:
                        fid = x["fileId"]
                    idx[r["key"]] = (x["partitionName"], fid)
            wrong = {k: {"index": idx[k], "snapshot": live[k]} for k in live if k in idx and idx[k] != live[k]}
            out["record_index"] = {"entries": len(idx), "live_keys": len(live),
                                   "keys_missing_from_index": sorted(set(live) - set(idx))[:10],
                                   "index_keys_not_live": sorted(set(idx) - set(live))[:10],
                                   "wrong_location": dict(list(wrong.items())[:10]), "wrong_count": len(wrong)}
        return out

    def latest_files_by_listing(self):
        engine, md, mc = self.java()
        tl = mc.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
        v = self.jvm.org.apache.hudi.common.table.view.HoodieTableFileSystemView.fileListingBasedFileSystemView(engine, mc, tl)
        out = []
        for part in sorted(disk_files(self.path)):
            for s in v.getLatestFileSlices(part).iterator():
                b = s.getBaseFile()
                if b.isPresent():
                    out.append((part, b.get().getFileName(), True))
                for lf in s.getLogFiles().iterator():
                    out.append((part, lf.getFileName(), False))
        md.close()
        return out


def problems(rep):
    """The report's failures as short strings (empty: all checks passed)."""
    out = []
    if "read_error" in rep:
        out.append("read: " + rep["read_error"])
    if rep.get("keys_held_twice"):
        out.append(f"{rep['keys_held_twice']} keys held twice")
    for f in rep.get("filters", []):
        if "error" in f:
            out.append(f"filter {f['filter']}: {f['error']}")
        elif not f.get("same_rows_as_skipping_off"):
            out.append(f"filter {f['filter']}: data skipping changed the rows")
    pr = rep.get("procedures", {})
    if "error" in pr:
        out.append("procedures: " + pr["error"])
    for k in ("show_metadata_table_partitions", "show_metadata_table_stats", "show_metadata_table_column_stats"):
        if isinstance(pr.get(k), dict) and "error" in pr[k]:
            out.append(f"{k}: {pr[k]['error']}")
    for part, v in (pr.get("show_metadata_table_files_vs_disk") or {}).items():
        if v != "same":
            out.append(f"show_metadata_table_files {part!r}: {v}")
    v = pr.get("validate_metadata_table_files", {})
    if "error" in v:
        out.append("validate_metadata_table_files: " + v["error"])
    elif v.get("mismatches"):
        out.append(f"validate_metadata_table_files: {len(v['mismatches'])} mismatches, e.g. {v['mismatches'][0]}")
    j = rep.get("java", {})
    if "error" in j:
        out.append("Hudi MDT classes: " + j["error"])
    else:
        if not j.get("partitions_same_as_listing"):
            out.append(f"HoodieBackedTableMetadata partitions {j.get('partitions')} differ from the listing")
        for k in ("files_vs_disk", "latest_file_slices_mdt_vs_listing", "all_file_groups_mdt_vs_listing"):
            if j.get(k) != "same":
                out.append(f"HoodieBackedTableMetadata {k}: {json.dumps(j.get(k))[:600]}")
        if j.get("latest_commit", {}).get("mdt_size_mismatch"):
            out.append(f"latest commit sizes vs MDT: {j['latest_commit']['mdt_size_mismatch']}")
        cs = j.get("column_stats")
        if cs and (cs["missing_base_count"] or cs["differs_count"]):
            out.append(f"HoodieBackedTableMetadata.getColumnStats: {cs['missing_base_count']} missing for base files "
                       f"{cs['missing_for_base_files'][:3]}, {cs['differs_count']} differ from the files' values {cs['differs_from_data'][:2]}")

        ri = j.get("record_index")
        if ri and (ri["missing"] or ri["wrong_count"] or ri["found"] != ri["live_keys"]):
            out.append(f"readRecordIndexLocationsWithKeys: {ri}")
    t = rep.get("mdt_as_table", {})
    if "error" in t:
        out.append("MDT read as a table: " + t["error"])
    else:
        if not t.get("files_partition_list_same_as_disk"):
            out.append(f"MDT table: partition list {t.get('files_partition_list')} differs from disk")
        if t.get("files_vs_disk") != "same":
            out.append(f"MDT table files vs disk: {json.dumps(t.get('files_vs_disk'))[:600]}")
        cs = t.get("column_stats")
        if cs and cs["missing_base_count"]:
            out.append(f"MDT table column_stats: {cs['missing_base_count']} entries missing for base files {cs['missing_for_base_files'][:3]}")
        ps = t.get("partition_stats")
        if ps and (ps["missing"] or ps["narrower_than_files"]):
            out.append(f"MDT table partition_stats: missing {ps['missing'][:3]}, narrower {ps['narrower_than_files'][:2]}")
        ri = t.get("record_index")
        if ri and (ri["keys_missing_from_index"] or ri["index_keys_not_live"] or ri["wrong_count"]):
            out.append(f"MDT table record_index: {ri}")
    return out


def findings(rep):
    """Not the MDT's content: what Java's own reading of the data files says differently."""
    cs = rep.get("java", {}).get("column_stats")
    if cs and cs.get("footer_differs_count"):
        cols = sorted({d["column"] for d in cs["differs_from_hudi_footer_reading"]})
        d = cs["differs_from_hudi_footer_reading"][0]
        return [f"ParquetUtils.readColumnStatsFromMetadata (what HoodieMetadataTableValidator and Java's column_stats "
                f"initialisation read) sees no min/max in {cs['footer_differs_count']} latest base file(s) for {cols}: "
                f"e.g. {d['file']} {d['column']}: MDT (min, max, nulls, count) {list(d['mdt'])}, Java from the footer "
                f"{list(d['hudi_footer_stats'])}, parquet-mr {d['parquet_mr']}"]
    return []


def upsert(spark, path, report, build_mdt=False, extra=None):
    props = read_properties(path)
    opts = write_options(props)
    opts.update(extra or {})
    if build_mdt:  # Spark builds files, column_stats and partition_stats from a listing
        opts.update({"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
                     "hoodie.metadata.index.partition.stats.enable": "true"})
    keys = props["hoodie.table.recordkey.fields"].split(",")
    try:
        df, _ = reader(spark, path, "snapshot", extra=read_opts(path))
        rows = sorted((r.asDict() for r in df.select(*COLUMNS).collect()), key=lambda d: d["id"])
        batch = []
        for i, d in enumerate(rows[:3]):
            batch.append(dict(d, v=7000.0 + i, ts=d["ts"] + 10))
        batch.append({"id": "SPARK1", "ts": 5000, "region": rows[0]["region"], "v": 1.25})
        if props.get("hoodie.table.partition.fields"):
            batch.append({"id": "SPARK2", "ts": 5001, "region": "spark", "v": 2.5})
        spark.createDataFrame(batch, schema=df.select(*COLUMNS).schema).write.format("hudi") \
            .options(**opts).mode("append").save(path)
        report["upserts"].append({"ok": True, "rows": len(batch), "options": opts, "keys": keys})
    except Exception as e:  # noqa: BLE001
        report["upserts"].append({"ok": False, "error": err(e), "options": opts})
        print("UPSERT FAILED: " + err(e), file=sys.stderr)


def make(spark, path, kind, report):
    """A Spark-written partitioned table: insert, upsert (updates + inserts), delete."""
    import shutil
    shutil.rmtree(path, ignore_errors=True)
    name = os.path.basename(path.rstrip("/"))
    opts = {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": "MERGE_ON_READ" if kind == "nomdt" else "COPY_ON_WRITE",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.compact.inline": "false",
        "hoodie.parquet.small.file.limit": "0",
    }
    if kind == "nomdt":
        opts["hoodie.metadata.enable"] = "false"
    else:
        opts.update({"hoodie.metadata.enable": "true",
                     "hoodie.metadata.index.column.stats.enable": "false",
                     "hoodie.metadata.index.partition.stats.enable": "false",
                     "hoodie.metadata.record.index.enable": "false"})
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType
    schema = StructType([StructField("id", StringType(), False), StructField("ts", LongType()),
                         StructField("region", StringType()), StructField("v", DoubleType())])
    regions = ["eu", "us", "ap"]
    w1 = [{"id": f"K{i:02d}", "ts": i * 10, "region": regions[i // 10], "v": i * 1.5} for i in range(30)]
    w2 = [{"id": f"K{i:02d}", "ts": i * 10 + 5, "region": "eu", "v": -1.0} for i in range(5)] + \
         [{"id": f"K{i:02d}", "ts": 1000 + i, "region": "sa", "v": i * 1.5} for i in range(30, 40)]
    w3 = [{"id": "K10", "ts": 999, "region": "us", "v": 0.0}, {"id": "K11", "ts": 999, "region": "us", "v": 0.0},
          {"id": "K35", "ts": 2000, "region": "sa", "v": 0.0}]
    for op, rows in (("insert", w1), ("upsert", w2), ("delete", w3)):
        spark.createDataFrame(rows, schema=schema).write.format("hudi").options(**opts) \
            .option("hoodie.datasource.write.operation", op).mode("append").save(path)
    report["made"] = {"kind": kind, "options": opts, "metadata_partitions": table_partitions(path)}


def main():
    path = os.path.abspath(sys.argv[1])
    prefix = sys.argv[2]
    args = sys.argv[3:]
    filters = [args[i + 1] for i, a in enumerate(args) if a == "--filter"]
    actions = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--filter")]
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    spark = get_spark(HUDI_1X, app="spark_mdt", driver_memory="3g",
                      extra_conf={"spark.sql.adaptive.enabled": "false"})
    report = {"actions": actions, "upserts": []}
    checker = Checker(spark, path, prefix, filters)
    for a in actions:
        if a == "check":
            checker.check()
        elif a == "upsert":
            upsert(spark, path, report)
        elif a == "upsert-build-mdt":
            upsert(spark, path, report, build_mdt=True)
        elif a.startswith("make-"):
            make(spark, path, a[5:], report)
        else:
            sys.exit(f"unknown action {a}")
    with open(prefix + ".run.json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    out.write(json.dumps({k: v for k, v in report.items() if k != "actions"}, default=str) + "\n")
    out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
