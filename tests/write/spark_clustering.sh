#!/usr/bin/env bash
# Clustering between hudi-edge and Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh and the hudi-rs venv). tests/write/spark_compaction.py does the Spark
# side; every JVM runs under `flock /tmp/spark.lock` (one at a time on a shared machine).
# Tables `hudi-edge create` made (partitioned, metadata table with the record index), written
# in small upserts that each open new file groups (`hoodie.parquet.small.file.limit=0`):
#   (a) Merge-On-Read, logs left uncompacted: hudi-edge schedules a clustering
#       (`cluster --schedule-only`); Spark executes our plan (`run_clustering`); Spark,
#       hudi-rs and hudi-edge read the same rows as before it; Spark's metadata-table checks
#       pass; hudi-edge writes again and everyone agrees.
#   (b) Copy-On-Write: Spark schedules a clustering (`run_clustering(op => 'schedule')`);
#       hudi-edge executes Spark's plan (`cluster --instant`); everyone agrees, Spark's checks
#       pass, Spark upserts after it and hudi-edge after Spark; then Spark upserts with its
#       inline clustering (`hoodie.clustering.inline`) and hudi-edge writes after that.
#   (c) the plans and the completed replace commits of (a) and (b), read by Java's Avro
#       library: Spark's against ours, field by field.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_clustering.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_clustering.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-clustering}
source tests/write/spark_lib.sh
source tests/write/spark_services_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS
small=(--option hoodie.parquet.small.file.limit=0 --option hoodie.compact.inline=false)

# File groups of TABLE's latest slices, and its pending / completed clusterings.
census() { # TABLE
  echo "  file groups: $("$bin" file-groups "$1" --json | "$py" -c '
import json, sys
print(len(json.load(sys.stdin)["groups"]))' 2>/dev/null || echo "?"); $("$py" - "$1" <<'PY'
import os, sys
tl = os.path.join(sys.argv[1], ".hoodie", "timeline")
names = os.listdir(tl)
done = {n.split("_")[0] for n in names if n.endswith(".replacecommit")}
plans = sorted(n.split(".")[0] for n in names if n.endswith(".clustering.requested"))
print("clusterings completed %s, pending %s" % ([p for p in plans if p in done], [p for p in plans if p not in done]))
PY
)"
}

pending_clustering() { # TABLE -> the pending clustering's instant
  "$py" - "$1" <<'PY'
import os, sys
tl = os.path.join(sys.argv[1], ".hoodie", "timeline")
names = os.listdir(tl)
done = {n.split("_")[0] for n in names if "_" in n.split(".")[0]}
print(" ".join(sorted(n.split(".")[0] for n in names if n.endswith(".clustering.requested") and n.split(".")[0] not in done)))
PY
}

# Rows without `_hoodie_file_name` (clustering moves rows to new files, the rest stays).
moved() { "$py" -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); r.pop("_hoodie_file_name", None); print(json.dumps(r, sort_keys=True))' "$1"; }

completed_file() { ls "$1/.hoodie/timeline" | grep "^$2_.*\.replacecommit$"; }

echo "(a) hudi-edge schedules, Spark executes (Merge-On-Read)"
t=$out/a
create "$t" mor
for n in 1 2 3 4; do edge_upsert "$t" "$n" "${small[@]}"; done
ours "$t" > "$t.before.jsonl"
census "$t"
"$bin" cluster "$t" --schedule-only --json > "$t.schedule.json" || { echo "  cluster --schedule-only FAILED"; status=1; }
ta=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["scheduled"])' "$t.schedule.json")
echo "  hudi-edge: four upserts; plan $ta"
spark "$t" "$t.s1" "cluster=$ta" show-clustering rows check
echo "  Spark: run_clustering $ta: $("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("execute"), "; show_clustering:", r.get("show_clustering"))' "$t.s1.report.json")"
census "$t"
agree "$t" "$t.s1" 1
moved "$t.before.jsonl" > "$t.before.moved.jsonl"; moved "$t.s1.ours.jsonl" > "$t.after.moved.jsonl"
same "hudi-edge before vs after Spark's clustering (but _hoodie_file_name)" "$t.before.moved.jsonl" "$t.after.moved.jsonl"
edge_upsert "$t" 5 "${small[@]}"
echo "  hudi-edge: one more upsert"
spark "$t" "$t.s2" rows check
agree "$t" "$t.s2" 1
spark_commit_a=$t/.hoodie/timeline/$(completed_file "$t" "$ta")
our_plan_a=$t/.hoodie/timeline/$ta.clustering.requested

echo "(b) Spark schedules, hudi-edge executes (Copy-On-Write)"
t=$out/b
create "$t" cow
for n in 1 2 3 4; do edge_upsert "$t" "$n" "${small[@]}"; done
ours "$t" > "$t.before.jsonl"
census "$t"
spark "$t" "$t.s1" schedule-cluster show-clustering
tb=$(pending_clustering "$t")
echo "  Spark: clustering $tb scheduled"
"$bin" cluster "$t" --instant "$tb" --json > "$t.cluster.json" || { echo "  cluster --instant FAILED"; status=1; }
echo "  hudi-edge: $("$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for d in r["completed"]:
    print("executed %s: %d groups, %d file groups into %d files, %d records, %d requests, %d ms" % (d["instant"], d["groups"], len(d["file_groups_replaced"]), len(d["files_written"]), d["records_written"], d["io"]["requests"], d["elapsed_ms"]))' "$t.cluster.json")"
census "$t"
ours "$t" > "$t.after.jsonl"
moved "$t.before.jsonl" > "$t.before.moved.jsonl"; moved "$t.after.jsonl" > "$t.after.moved.jsonl"
same "hudi-edge before vs after our clustering (but _hoodie_file_name)" "$t.before.moved.jsonl" "$t.after.moved.jsonl"
spark "$t" "$t.s2" check upsert rows check
mdt_summary "$t.s2.check1.report.json"
"$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("  Spark: upsert after our clustering:", "ok" if r["upserts"] and all(u["ok"] for u in r["upserts"]) else "FAILED")' "$t.s2.report.json" || status=1
agree "$t" "$t.s2" 2
edge_upsert "$t" 5 "${small[@]}"
echo "  hudi-edge: upsert after Spark's"
spark "$t" "$t.s3" rows check
agree "$t" "$t.s3" 1
echo "  Spark: upsert with inline clustering (hoodie.clustering.inline)"
spark "$t" "$t.s4" upsert-cluster rows check
census "$t"
agree "$t" "$t.s4" 1
edge_upsert "$t" 6 "${small[@]}"
echo "  hudi-edge: upsert after Spark's inline clustering"
spark "$t" "$t.s5" rows check
agree "$t" "$t.s5" 1
spark_plan_b=$t/.hoodie/timeline/$tb.clustering.requested
our_commit_b=$t/.hoodie/timeline/$(completed_file "$t" "$tb")

echo "(c) Spark's plan and replace commit against ours, read by Java's Avro library"
d=$out/c
spark "$out/a" "$d" "decode=$our_plan_a" "decode=$spark_plan_b" "decode=$spark_commit_a" "decode=$our_commit_b"
"$py" - "$d" "$(basename "$our_plan_a")" "$(basename "$spark_plan_b")" "$(basename "$spark_commit_a")" "$(basename "$our_commit_b")" <<'PY' || status=1
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}.{n}.json"))
ours_plan, spark_plan = load(sys.argv[2]), load(sys.argv[3])
spark_commit, ours_commit = load(sys.argv[4]), load(sys.argv[5])
bad = 0
def check(what, ok, detail=""):
    global bad
    bad += not ok
    print(f"  {what}: {'same' if ok else 'DIFFERENT ' + detail}")
check("plan: writer schema", ours_plan["schema"] == spark_plan["schema"])
(o,), (s,) = ours_plan["records"], spark_plan["records"]
for k in ["operationType", "extraMetadata", "version"]:
    check(f"plan: {k} ({json.dumps(s[k])})", o[k] == s[k], f"ours {o[k]!r}")
op, sp = o["clusteringPlan"], s["clusteringPlan"]
for k in ["strategy", "extraMetadata", "version", "preserveHoodieMetadata", "missingSchedulePartitions"]:
    check(f"plan: clusteringPlan.{k} ({json.dumps(sp[k])})", op[k] == sp[k], f"ours {op[k]!r}")
og, sg = op["inputGroups"][0], sp["inputGroups"][0]
check("plan group: fields", list(og) == list(sg), f"{list(og)} vs {list(sg)}")
check("plan group: metrics keys in order", list(og["metrics"]) == list(sg["metrics"]), f"{list(og['metrics'])} vs {list(sg['metrics'])}")
for k in ["numOutputFileGroups", "extraMetadata", "version"]:
    check(f"plan group: {k} ({json.dumps(sg[k])})", og[k] == sg[k], f"ours {og[k]!r}")
osl, ssl = og["slices"][0], sg["slices"][0]
check("plan slice: fields", list(osl) == list(ssl), f"{list(osl)} vs {list(ssl)}")
for k in ["bootstrapFilePath", "version"]:
    check(f"plan slice: {k} ({json.dumps(ssl[k])})", osl[k] == ssl[k], f"ours {osl[k]!r}")
for sl in [x for g in op["inputGroups"] + sp["inputGroups"] for x in g["slices"]]:
    if sl["dataFilePath"] and not sl["dataFilePath"].startswith(("/", "file:")):
        check("plan: absolute paths", False, sl["dataFilePath"])
groups = lambda p: [(g["slices"][0]["partitionPath"], len(g["slices"])) for g in p["inputGroups"]]
print(f"  plans: ours {groups(op)}, Spark's {groups(sp)} (partition, slices)")
check("commit: writer schema", ours_commit["schema"] == spark_commit["schema"])
(oc,), (sc,) = ours_commit["records"], spark_commit["records"]
for k in ["compacted", "operationType", "version"]:
    check(f"commit: {k} ({json.dumps(sc[k])})", oc[k] == sc[k], f"ours {oc[k]!r}")
check("commit: extraMetadata keys", list(oc["extraMetadata"]) == list(sc["extraMetadata"]), f"{list(oc['extraMetadata'])} vs {list(sc['extraMetadata'])}")
stats = lambda c: [s for v in c["partitionToWriteStats"].values() for s in v]
set_fields = lambda s: sorted(k for k, v in s.items() if v is not None)
os_, ss_ = stats(oc), stats(sc)
check("commit: write stats fields set (not null)", {tuple(set_fields(s)) for s in os_} == {tuple(set_fields(s)) for s in ss_},
      f"ours {sorted({tuple(set_fields(s)) for s in os_})} Spark {sorted({tuple(set_fields(s)) for s in ss_})}")
for s in os_ + ss_:
    if s["prevCommit"] != "null" or s["numInserts"] != s["numWrites"]:
        check("commit: stats are creates", False, json.dumps(s)[:300])
replaced = lambda c: sum(len(v) for v in c["partitionToReplaceFileIds"].values())
print(f"  commits: ours {len(os_)} write stats replacing {replaced(oc)} file groups, Spark's {len(ss_)} replacing {replaced(sc)}")
sys.exit(1 if bad else 0)
PY

echo "done in $((SECONDS - start)) s; status $status"
exit $status
