#!/usr/bin/env bash
# Merge-On-Read compaction between hudi-edge and Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh and the hudi-rs venv). tests/write/spark_compaction.py does the Spark
# side; every JVM runs under `flock /tmp/spark.lock` (one at a time on a shared machine).
# Tables `hudi-edge create` made (partitioned MOR, metadata table with the record index):
#   (a) hudi-edge writes five upserts and schedules a compaction (`compact --schedule-only`);
#       Spark executes our plan (`run_compaction`); Spark, hudi-rs and hudi-edge read the same
#       snapshot and read-optimized rows; Spark's metadata-table checks pass; hudi-edge writes
#       again and everyone agrees.
#   (b) hudi-edge writes four upserts; Spark upserts and schedules a compaction
#       (`hoodie.compact.schedule.inline`); hudi-edge executes Spark's plan (`compact
#       --instant`); everyone agrees, Spark's checks pass, Spark keeps writing.
#   (c) hudi-edge writes five upserts with inline compaction at its defaults (the fifth
#       compacts); Spark reads, checks and upserts; five more hudi-edge upserts compact
#       Spark's log files too; Spark reads and checks again.
#   (d) the plans and the completed compactions of (a) and (b), read by Java's Avro library:
#       Spark's against ours, field by field; the metadata table's delta commits too.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_compaction.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_compaction.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-compaction}
source tests/write/spark_lib.sh
source tests/write/spark_services_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS

# A compaction the write ran after its commit, in one line.
edge_compaction() { # WRITE_JSON
  "$py" - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])).get("services", {}).get("compaction")
if not c:
    print("no compaction")
else:
    for d in c.get("completed", []):
        print(f"compaction {d['instant']}: {d['file_groups']} file groups, {d['log_files']} log files, "
              f"{d['records_written']} records, {d['io']['requests']} requests")
    if c.get("error"):
        print("ERROR " + c["error"])
PY
}

# Completed compactions, pending ones, delta commits on TABLE's timeline.
census() { # TABLE
  "$py" - "$1" <<'PY'
import os, sys
tl = os.path.join(sys.argv[1], ".hoodie", "timeline")
names = os.listdir(tl)
done = {n.split("_")[0] for n in names if "_" in n.split(".")[0]}
plans = sorted(n.split(".")[0] for n in names if n.endswith(".compaction.requested"))
print("  timeline: %d delta commits, compactions completed %s, pending %s" % (
    sum(n.endswith(".deltacommit") for n in names),
    [p for p in plans if p in done], [p for p in plans if p not in done]))
PY
}

pending_compaction() { # TABLE -> the one pending compaction's instant
  "$py" - "$1" <<'PY'
import os, sys
tl = os.path.join(sys.argv[1], ".hoodie", "timeline")
names = os.listdir(tl)
done = {n.split("_")[0] for n in names if "_" in n.split(".")[0]}
print(" ".join(sorted(n.split(".")[0] for n in names if n.endswith(".compaction.requested") and n.split(".")[0] not in done)))
PY
}

completed_file() { ls "$1/.hoodie/timeline" | grep "^$2_.*\.commit$"; }

echo "(a) hudi-edge schedules, Spark executes"
t=$out/a
create "$t"
for n in 1 2 3 4 5; do edge_upsert "$t" "$n" --option hoodie.compact.inline=false; done
"$bin" compact "$t" --schedule-only --json > "$t.schedule.json" || { echo "  compact --schedule-only FAILED"; status=1; }
ta=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["scheduled"])' "$t.schedule.json")
echo "  hudi-edge: five upserts; plan $ta"
census "$t"
spark "$t" "$t.s1" "run=$ta" rows check show
echo "  Spark: run_compaction $ta: $("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("run"), "; show_compaction:", [(s.get("timestamp"), s.get("state"), s.get("operation_size")) for s in r.get("show", [])])' "$t.s1.report.json")"
census "$t"
agree "$t" "$t.s1" 1
edge_upsert "$t" 6
echo "  hudi-edge: one more upsert ($(edge_compaction "$t.w6.json"))"
spark "$t" "$t.s2" rows check
agree "$t" "$t.s2" 1
spark_plan_a=$t/.hoodie/timeline/$ta.compaction.requested
spark_commit_a=$t/.hoodie/timeline/$(completed_file "$t" "$ta")

echo "(b) Spark schedules, hudi-edge executes"
t=$out/b
create "$t"
for n in 1 2 3 4; do edge_upsert "$t" "$n" --option hoodie.compact.inline=false; done
spark "$t" "$t.s1" upsert-schedule show
tb=$(pending_compaction "$t")
echo "  Spark: upsert, compaction $tb scheduled"
census "$t"
"$bin" compact "$t" --instant "$tb" --json > "$t.compact.json" || { echo "  compact --instant FAILED"; status=1; }
echo "  hudi-edge: $("$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for d in r["completed"]:
    print("executed %s: %d file groups, %d log files, %d records, %d requests, %d ms" % (d["instant"], d["file_groups"], d["log_files"], d["records_written"], d["io"]["requests"], d["elapsed_ms"]))' "$t.compact.json")"
census "$t"
spark "$t" "$t.s2" check upsert rows check
mdt_summary "$t.s2.check1.report.json"
"$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("  Spark: upsert after our compaction:", "ok" if r["upserts"] and all(u["ok"] for u in r["upserts"]) else "FAILED")' "$t.s2.report.json" || status=1
agree "$t" "$t.s2" 2
edge_upsert "$t" 5
echo "  hudi-edge: upsert after Spark's ($(edge_compaction "$t.w5.json"))"
spark "$t" "$t.s3" rows check
agree "$t" "$t.s3" 1
our_plan_b=$t/.hoodie/timeline/$tb.compaction.requested
our_commit_b=$t/.hoodie/timeline/$(completed_file "$t" "$tb")

echo "(c) hudi-edge compacts inline; Spark reads, checks and keeps writing"
t=$out/c
create "$t"
for n in 1 2 3 4 5; do edge_upsert "$t" "$n"; done
echo "  hudi-edge: five upserts, the fifth: $(edge_compaction "$t.w5.json")"
census "$t"
spark "$t" "$t.s1" rows check
agree "$t" "$t.s1" 1
spark "$t" "$t.s1b" upsert
echo "  Spark: upsert"
for n in 6 7 8 9 10; do
  edge_upsert "$t" "$n"
  c=$(edge_compaction "$t.w$n.json")
  [ "$c" = "no compaction" ] || echo "  hudi-edge: upsert $n: $c"
done
census "$t"
spark "$t" "$t.s2" rows check
agree "$t" "$t.s2" 1
tc=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["services"]["compaction"]["completed"][0]["instant"])' "$t.w5.json")

echo "(d) Spark's plan and compaction commit against ours, read by Java's Avro library"
d=$out/d
spark "$out/c" "$d" "decode=$spark_plan_a" "decode=$our_plan_b" "decode=$spark_commit_a" "decode=$our_commit_b"
"$py" - "$d" "$(basename "$spark_plan_a")" "$(basename "$our_plan_b")" "$(basename "$spark_commit_a")" "$(basename "$our_commit_b")" <<'PY' || status=1
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}.{n}.json"))
# (a)'s plan is ours, executed by Spark; (b)'s is Spark's, executed by us.
ours_plan, spark_plan = load(sys.argv[2]), load(sys.argv[3])
spark_commit, ours_commit = load(sys.argv[4]), load(sys.argv[5])
bad = 0
def check(what, ok, detail=""):
    global bad
    bad += not ok
    print(f"  {what}: {'same' if ok else 'DIFFERENT ' + detail}")
check("plan: writer schema", ours_plan["schema"] == spark_plan["schema"])
(op,), (sp,) = ours_plan["records"], spark_plan["records"]
for k in ["extraMetadata", "version", "strategy", "preserveHoodieMetadata", "missingSchedulePartitions"]:
    check(f"plan: {k} ({json.dumps(sp[k])})", op[k] == sp[k], f"ours {op[k]!r}")
check("plan: field order", list(op) == list(sp), f"{list(op)} vs {list(sp)}")
o0, s0 = op["operations"][0], sp["operations"][0]
check("plan operation: fields", list(o0) == list(s0), f"{list(o0)} vs {list(s0)}")
check("plan operation: metrics keys in order", list(o0["metrics"]) == list(s0["metrics"]), f"{list(o0['metrics'])} vs {list(s0['metrics'])}")
for o in op["operations"] + sp["operations"]:
    names = o["deltaFilePaths"] + [o["dataFilePath"] or ""]
    if any("/" in n for n in names):
        check("plan: file names, not paths", False, str(names))
sizes = lambda p: [o["metrics"]["TOTAL_LOG_FILES_SIZE"] for o in p["operations"]]
check("plan: operations by log size, largest first", sizes(op) == sorted(sizes(op), reverse=True) and sizes(sp) == sorted(sizes(sp), reverse=True), f"{sizes(op)} / {sizes(sp)}")
print(f"  plans: ours {len(op['operations'])} operations, Spark's {len(sp['operations'])}")
check("commit: writer schema", ours_commit["schema"] == spark_commit["schema"])
(oc,), (sc,) = ours_commit["records"], spark_commit["records"]
for k in ["compacted", "operationType", "version"]:
    check(f"commit: {k} ({json.dumps(sc[k])})", oc[k] == sc[k], f"ours {oc[k]!r}")
check("commit: extraMetadata keys", list(oc["extraMetadata"]) == list(sc["extraMetadata"]), f"{list(oc['extraMetadata'])}")
schema = lambda c: json.loads(c["extraMetadata"]["schema"])
check("commit: schema has no meta fields (both)", not any(f["name"].startswith("_hoodie") for f in schema(oc)["fields"] + schema(sc)["fields"]))
stats = lambda c: [s for v in c["partitionToWriteStats"].values() for s in v]
set_fields = lambda s: sorted(k for k, v in s.items() if v is not None)
os_, ss_ = stats(oc), stats(sc)
check("commit: write stats fields set (not null)", {tuple(set_fields(s)) for s in os_} == {tuple(set_fields(s)) for s in ss_},
      f"ours {sorted({tuple(set_fields(s)) for s in os_})} Spark {sorted({tuple(set_fields(s)) for s in ss_})}")
for s in os_ + ss_:
    if not s["path"].endswith(".parquet") or s["prevBaseFile"] is None:
        check("commit: stats name a new base file and the one it replaces", False, json.dumps(s)[:300])
print(f"  commits: ours {len(os_)} write stats, Spark's {len(ss_)}")
sys.exit(1 if bad else 0)
PY
for x in a:$ta b:$tb c:$tc; do
  tbl=$out/${x%%:*}; inst=${x#*:}
  echo "  metadata table's delta commit at the compaction ($(basename "$tbl"), $( [ "$tbl" = "$out/a" ] && echo Spark || echo hudi-edge )): $("$bin" commit "$tbl/.hoodie/metadata" "$inst" | "$py" -c '
import json, sys
c = json.load(sys.stdin)["content"]
parts = {p: sum(s["numWrites"] for s in v) for p, v in c["partitionToWriteStats"].items()}
print(c["operationType"], "; records by partition:", dict(sorted(parts.items())))')"
done

echo "done in $((SECONDS - start)) s; status $status"
exit $status
