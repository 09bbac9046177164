"""Expected results for the hudi-rs writer matrix (tests/write/make_hudi_rs_matrix.sh), from
two independent readers of the same tables:

    python hudi_rs_matrix_expected.py hudi-rs WORK NAME...   # PyPI `hudi` (hudi-rs), venv
    tests/spark/run.sh hudi_rs_matrix_expected.py spark WORK NAME...   # Apache Hudi Spark 1.1.1
    python hudi_rs_matrix_expected.py merge WORK OUT_DIR NAME...

Each reader answers the same queries on WORK/tables/NAME: snapshot, read-optimized (MOR), time
travel to every completed write, and incremental (previous completion, completion] for every
write. `merge` writes OUT_DIR/NAME.json: every distinct row once (`rows`), and per query the
row numbers both readers returned, or each reader's answer where they differ.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WRITES = ("commit", "deltacommit", "replacecommit")


def completed(table):
    out = []
    timeline = os.path.join(table, ".hoodie", "timeline")
    if not os.path.isdir(timeline):
        # Table version 6: `<requested>.<action>` in .hoodie, no completion time; incremental
        # bounds are requested times there.
        for f in sorted(os.listdir(os.path.join(table, ".hoodie"))):
            m = re.match(r"^(\d+)\.(commit|deltacommit|replacecommit|rollback|clean)$", f)
            if m:
                out.append({"requested_time": m.group(1), "completion_time": m.group(1), "action": m.group(2)})
        return sorted(out, key=lambda r: r["requested_time"])
    for f in sorted(os.listdir(timeline)):
        m = re.match(r"^(\d+)_(\d+)\.(\w+)$", f)
        if m:
            out.append({"requested_time": m.group(1), "completion_time": m.group(2), "action": m.group(3)})
    return sorted(out, key=lambda r: r["requested_time"])


def properties(table):
    props = {}
    for line in open(os.path.join(table, ".hoodie", "hoodie.properties")):
        if "=" in line and not line.startswith("#"):
            k, v = line.rstrip("\n").split("=", 1)
            props[k] = v
    return props


def load_steps(work):
    """The writer's line for each table (steps, and the filters its reads include)."""
    with open(os.path.join(work, "steps.jsonl")) as f:
        return {d["table"]: d for d in map(json.loads, f)}


def queries(table):
    """(query id, kind, args) for every query both readers answer."""
    filters = load_steps(os.path.dirname(os.path.dirname(table))).get(
        os.path.basename(table), {}).get("filters", FILTERS)
    props = properties(table)
    out = [("snapshot", "snapshot", {})]
    if props["hoodie.table.type"] == "MERGE_ON_READ":
        out.append(("read_optimized", "read_optimized", {}))
    writes = [c for c in completed(table) if c["action"] in WRITES]
    for c in writes:
        out.append((f"as_of {c['requested_time']}", "time_travel", {"as_of": c["requested_time"]}))
    # Incremental bounds are completion times on table versions 8 and 9 (both readers).
    starts = ["000"] + [c["completion_time"] for c in writes[:-1]]
    for start, c in zip(starts, writes):
        out.append((f"incremental ({start}, {c['completion_time']}]", "incremental",
                    {"start": start, "end": c["completion_time"]}))
    # Filtered snapshots, with each reader's data skipping on (Spark: the metadata table's
    # column stats, partition stats and record index as hudi-rs wrote them).
    for f in filters:
        out.append(("filter " + " and ".join(" ".join(t) for t in f), "filter", {"filters": f}))
    return out


FILTERS = [
    [["ts", "<", "1030"]],
    [["ts", ">=", "5000"]],
    [["id", "=", "id-0050"]],
    [["id", "=", "id-0004"]],  # deleted
]


def spark_where(filters):
    def lit(v):
        if v.lstrip("-").isdigit() or v.replace(".", "", 1).isdigit():
            return v
        if v.endswith("Z"):  # an instant: compared as a timestamp
            return f"TIMESTAMP '{v[:-1].replace('T', ' ')}'"
        return "'" + v + "'"

    return " and ".join(f"{c} {op} {lit(v)}" for c, op, v in filters)


def sort_rows(rows):
    return sorted(rows, key=lambda r: (str(r.get("_hoodie_record_key")), str(r.get("_hoodie_partition_path")),
                                       json.dumps(r, sort_keys=True)))


def run_hudi_rs(work, names):
    import pyarrow as pa
    sys.path.insert(0, os.path.join(HERE, "..", "data", "fixtures", "tools"))
    from make_expected import canon_rows
    import hudi
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    for name in names:
        path = os.path.join(work, "tables", name)
        result = {"reader": f"hudi {hudi.__version__} (PyPI, hudi-rs)", "answers": {}}
        for qid, kind, a in queries(path):
            try:
                t = HudiTableBuilder.from_base_uri(path).build()
                o = HudiReadOptions()
                if kind == "read_optimized":
                    o = o.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
                elif kind == "time_travel":
                    o = o.with_as_of_timestamp(a["as_of"])
                elif kind == "filter":
                    o = HudiReadOptions(filters=[tuple(f) for f in a["filters"]])
                elif kind == "incremental":
                    o = (o.with_query_type(HudiQueryType.Incremental)
                         .with_start_timestamp(a["start"]).with_end_timestamp(a["end"]))
                batches = t.read(o)
                rows = canon_rows(pa.Table.from_batches(batches)) if batches else []
                result["answers"][qid] = {"rows": sort_rows(rows)}
            except Exception as e:  # noqa: BLE001 - recorded as the reader's answer
                result["answers"][qid] = {"error": f"{type(e).__name__}: {e}"}
        with open(os.path.join(work, f"{name}.hudi_rs.json"), "w") as f:
            json.dump(result, f)


def run_spark(work, names):
    sys.path.insert(0, os.path.join(HERE, "..", "spark"))
    from hudi_spark import HUDI_1X, get_spark, reader, rows_to_json

    spark = get_spark(HUDI_1X, app="hudi_rs_matrix", driver_memory="3g")
    for name in names:
        path = os.path.join(work, "tables", name)
        result = {"reader": f"Apache Hudi {HUDI_1X} Spark bundle, Spark 3.5.5", "answers": {}}
        extra = {"hoodie.metadata.enable": "true"}
        if evolved_on_read(path):
            # Spark maps columns by id only when asked (HoodieBaseRelation
            # isSchemaEvolutionEnabledOnRead); without it a renamed column reads as nulls.
            extra["hoodie.schema.on.read.enable"] = "true"
        for qid, kind, a in queries(path):
            try:
                if kind == "snapshot":
                    df, _ = reader(spark, path, extra=extra)
                elif kind == "read_optimized":
                    df, _ = reader(spark, path, "read_optimized", extra=extra)
                elif kind == "time_travel":
                    df, _ = reader(spark, path, as_of=a["as_of"], extra=extra)
                elif kind == "filter":
                    skipping = {**extra, "hoodie.enable.data.skipping": "true",
                                "hoodie.metadata.record.index.enable": "true"}
                    df, _ = reader(spark, path, extra=skipping)
                    df = df.where(spark_where(a["filters"]))
                else:
                    df, _ = reader(spark, path, "incremental", begin=a["start"], end=a["end"], extra=extra)
                result["answers"][qid] = {"rows": rows_to_json(df)}
            except Exception as e:  # noqa: BLE001
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                # Py4J's first line names only the call; Hudi's own exception says why.
                hudi = re.search(r"org\.apache\.hudi\.exception\.\w+: [^\n]*", str(e))
                if hudi:
                    msg = f"{msg} {hudi.group(0)}"
                result["answers"][qid] = {"error": msg[:500]}
        with open(os.path.join(work, f"{name}.spark.json"), "w") as f:
            json.dump(result, f)
    spark.stop()


# Who is right where the readers differ, from Hudi's Java/Scala source.
URL_ENCODED_INCREMENTAL = (
    "Spark's incremental relation takes partition column values from the URL-encoded partition "
    "directory (MergeOnReadIncrementalRelationV2.listFileSplits -> "
    "HoodieBaseRelation.getPartitionColumnValuesAsInternalRow, which forces "
    "extractPartitionValuesFromPartitionPath = true and parses the still-encoded relative URI), "
    "while its snapshot reads the value stored in the data file, as "
    "hoodie.datasource.read.extract.partition.values.from.path=false (the default) says: the "
    "stored value is right")


SCHEMA_ON_READ = (
    "the table's schema evolved on read (hoodie.schema.on.read.enable): Hudi matches a file's "
    "columns by InternalSchema id through the schema version it was written under "
    "(InternalSchemaCache.searchSchemaAndCache, InternalSchemaMerger), so a renamed column "
    "keeps its values and a dropped-then-re-added one does not take the old values (Spark read "
    "with hoodie.schema.on.read.enable=true, as such tables are read); hudi-rs matches columns "
    "by name")


NO_META_FIELDS_INCREMENTAL = (
    "the table does not populate meta fields, so no row says which commit wrote it: Hudi "
    "refuses incremental queries there (HoodieException \"Incremental queries are not "
    "supported when meta fields are disabled\"); hudi-rs answers with the rows of the range's "
    "files")


NO_META_FIELDS_RECORD_INDEX = (
    "the table does not populate meta fields, and Hudi 1.1.1 writes no record-index entries "
    "then (its metadata table holds none; its upserts insert every key again and its deletes "
    "find nothing): Spark prunes a key filter by that empty index and drops rows its own "
    "snapshot holds; hudi-rs filters the snapshot")


def evolved_on_read(table):
    """Whether the table's schema evolved on read (an InternalSchema history)."""
    d = os.path.join(table, ".hoodie", ".schema")
    return os.path.isdir(d) and any(f.endswith(".schemacommit") for f in os.listdir(d))


def verdict(name, props, kind, r, s, table=None):
    """(right reader, why) for a query the two readers answer differently."""
    if table and evolved_on_read(table) and "error" not in s:
        return "spark", SCHEMA_ON_READ
    if "error" in r and "error" not in s:
        return "spark", f"hudi-rs refuses the table: {r['error']}"
    no_meta_fields = props.get("hoodie.populate.meta.fields") == "false"
    if kind == "incremental" and no_meta_fields and "error" in s:
        return "spark", NO_META_FIELDS_INCREMENTAL
    if "error" in s and "error" not in r:
        return "hudi_rs", f"Spark fails: {s['error']}"
    record_index = "record_index" in props.get("hoodie.table.metadata.partitions", "").split(",")
    if kind == "filter" and no_meta_fields and record_index and "rows" in r and "rows" in s:
        spark_rows = [json.dumps(x, sort_keys=True) for x in s["rows"]]
        hudi_rs_rows = [json.dumps(x, sort_keys=True) for x in r["rows"]]
        if set(spark_rows) < set(hudi_rs_rows):
            return "hudi_rs", NO_META_FIELDS_RECORD_INDEX
    urlencoded = props.get("hoodie.datasource.write.partitionpath.urlencode") == "true"
    if kind == "incremental" and urlencoded:
        return "hudi_rs", URL_ENCODED_INCREMENTAL
    return None, "not decided"


def merge(work, out_dir, names):
    steps = load_steps(work)
    for name in names:
        path = os.path.join(work, "tables", name)
        props = properties(path)
        rs = json.load(open(os.path.join(work, f"{name}.hudi_rs.json")))
        sp = json.load(open(os.path.join(work, f"{name}.spark.json")))
        out = {
            "table": name,
            "written_by": steps[name].get(
                "written_by", "hudi-rs 0.6.0-rc.1 (crate hudi, tests/bench/hudi_rs_upsert/src/bin/matrix.rs)"),
            "readers": {"hudi_rs": rs["reader"], "spark": sp["reader"]},
            "table_version": int(props["hoodie.table.version"]),
            "table_type": props["hoodie.table.type"],
            "metadata_partitions": props.get("hoodie.table.metadata.partitions", "").split(","),
            "steps": steps[name]["steps"],
            **({"writer_options": steps[name]["options"]} if "options" in steps[name] else {}),
            "completed_instants": completed(path),
            "value_encoding": "tests/data/fixtures/tools/make_expected.py; rows sorted by (_hoodie_record_key, _hoodie_partition_path, row JSON)",
            "rows": [],
            "queries": [],
        }
        # Every distinct row once; answers list row numbers (time travel repeats most rows).
        index = {}

        def ids(answer):
            if "rows" not in answer:
                return answer
            out_ids = []
            for row in answer["rows"]:
                text = json.dumps(row, sort_keys=True)
                if text not in index:
                    index[text] = len(out["rows"])
                    out["rows"].append(row)
                out_ids.append(index[text])
            return {"row_ids": out_ids}

        for qid, kind, a in queries(path):
            q = {"id": qid, "kind": kind, **a}
            r, s = rs["answers"][qid], sp["answers"][qid]
            if r == s:
                q["agree"] = True
                q.update(ids(r))
            else:
                q["agree"] = False
                right, why = verdict(name, props, kind, r, s, path)
                if right:
                    q["right"] = right
                q["why"] = why
                q["hudi_rs"] = ids(r)
                q["spark"] = ids(s)
            out["queries"].append(q)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            rows = out.pop("rows")
            text = json.dumps(out, indent=1)
            # One line per row keeps the file short and its diffs readable.
            text = text[:-2] + ',\n "rows": [\n' + ",\n".join(json.dumps(r) for r in rows) + "\n ]\n}\n"
            f.write(text)
        agree = sum(q["agree"] for q in out["queries"])
        print(f"{name}: {agree}/{len(out['queries'])} queries agree")


def main():
    mode, work = sys.argv[1], sys.argv[2]
    if mode == "hudi-rs":
        run_hudi_rs(work, sys.argv[3:])
    elif mode == "spark":
        run_spark(work, sys.argv[3:])
    else:
        merge(work, sys.argv[3], sys.argv[4:])


main()
