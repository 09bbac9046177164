#!/usr/bin/env bash
# hudi-edge's cleaner against Apache Hudi Spark 1.1.1's (dev-only; needs tests/spark/setup.sh
# and the hudi-rs venv). For a COW and a MOR table `hudi-edge create` made:
#   1. twelve hudi-edge upserts (automatic cleaning off), then a Spark upsert (MOR: with inline
#      compaction, so the table has a compacted-away slice) with Spark's cleaner off;
#   2. three hudi-edge upserts and `hudi-edge clean` (keep 3 commits): it deletes old slices;
#      Spark reads the same rows as we do and hudi-rs, and Spark's metadata-table files check
#      (validate_metadata_table_files) passes; Spark's show_cleans / show_clean_plans list
#      our clean, and Java's Avro reader decodes our plan and metadata;
#   3. Spark upserts with its own cleaner (keep 2 commits) after ours; all readers agree;
#   4. two hudi-edge upserts and `hudi-edge clean` (keep 2) after Spark's clean; all agree;
#   5. Spark's and our clean instants compared field by field.
# Then a MOR table with 34 hudi-edge upserts (default cleaning): its metadata table cleaned
# itself; Spark reads it, validates it and upserts on it (its metadata writer takes over),
# and we write and read after Spark.
# Usage: flock /tmp/spark.lock tests/write/spark_clean.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_clean.txt; ~15 min, one JVM at a time)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-clean}
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS
off=(--option hoodie.clean.automatic=false)

# Upsert $2 into table $1: four rows, keys ($2 .. $2+3) mod 8, ordering field $2.
edge_upsert() {
  local t=$1 n=$2 f="$1.in$2.jsonl"; shift 2
  : > "$f"
  for k in 0 1 2 3; do
    local id=$(( (n + k) % 8 ))
    echo "{\"id\":$id,\"ts\":$((100 + n)),\"region\":\"$([ $((id % 2)) = 0 ] && echo eu || echo us)\",\"note\":\"edge-$n\"}" >> "$f"
  done
  "$bin" write "$t" --input "$f" "$@" > /dev/null || status=1
}

# Our clean of table $1 with options $2...: one line of what it did.
edge_clean() {
  local t=$1; shift
  "$bin" clean "$t" "$@" --json > "$t.clean.json" || status=1
  "$py" - "$t.clean.json" "$t.our_cleans" <<'PY' || status=1
import json, sys
done = json.load(open(sys.argv[1]))
with open(sys.argv[2], "a") as f:
    f.writelines(c["instant"] + "\n" for c in done if c["table"] == "data")
for c in done:
    print("  hudi-edge clean %s (%s table): %d files deleted, %d bytes freed, retaining from %s, %d requests"
          % (c["instant"], c["table"], c["files_deleted"], c["bytes_freed"], c["earliest_commit_to_retain"], c["io"]["requests"]))
sys.exit(0 if any(c["table"] == "data" and c["files_deleted"] > 0 for c in done) else 1)
PY
}

# Base and log files on storage, and how many clean instants are completed.
census() {
  "$py" - "$1" <<'PY'
import os, sys
t = sys.argv[1]
files = [n for d, _, ns in os.walk(t) if "/.hoodie" not in d for n in ns]
tl = os.listdir(os.path.join(t, ".hoodie", "timeline"))
print("  on storage: %d base files, %d log files; %d completed cleans" % (
    sum(n.endswith(".parquet") for n in files), sum(".log." in n for n in files),
    sum(n.endswith(".clean") for n in tl)))
PY
}

# Spark's view of the cleans of table $1 (step $2): procedures and decoded instants.
spark_cleans() {
  tests/spark/run.sh tests/write/spark_clean.py "$1" > "$1.cleans$2.json" 2> "$1.cleans$2.err" \
    || { tail -5 "$1.cleans$2.err"; status=1; return; }
  "$py" - "$1.cleans$2.json" "$1.our_cleans" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
ours = {l.strip() for l in open(sys.argv[2]) if l.strip()}
cleans = {c["clean_time"]: c for c in r["show_cleans"]}
plans = {p["plan_time"]: p for p in r["show_clean_plans"]}
ok = True
for t in sorted(ours):
    c, p = cleans.get(t), plans.get(t)
    print("  Spark show_cleans lists our clean %s: %s" % (t, "yes, %s files deleted, retain %s" % (
        c["total_files_deleted"], c["earliest_commit_to_retain"]) if c else "NO"))
    print("  Spark show_clean_plans lists our plan %s: %s" % (t, "yes, %s, %s partitions to clean" % (
        p["policy"], p["total_partitions_to_clean"]) if p else "NO"))
    ok &= bool(c and p)
print("  Java's Avro reader decoded %d clean instants (plans and metadata)" % len(r["instants"]))
sys.exit(0 if ok else 1)
PY
}

for type in cow mor; do
  t="$out/$type"
  echo "$type"
  : > "$t.our_cleans"
  "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
    --record-key id --partition-by region --ordering ts --type "$type" > /dev/null
  for n in $(seq 1 12); do edge_upsert "$t" "$n" "${off[@]}"; done
  echo "  hudi-edge: twelve upserts"
  compact=()
  [ "$type" = mor ] && compact=(--opt hoodie.compact.inline=true --opt hoodie.compact.inline.max.delta.commits=1)
  spark_step "$t" 1 --new-key-per-run --opt hoodie.clean.automatic=false "${compact[@]}"
  for n in 13 14 15; do edge_upsert "$t" "$n" "${off[@]}"; done
  census "$t"
  edge_clean "$t" --option hoodie.clean.commits.retained=3
  census "$t"
  spark_step "$t" 2 --read-only
  hudi_rs_same "$t"
  spark_cleans "$t" 2
  spark_step "$t" 3 --new-key-per-run --opt hoodie.clean.automatic=true \
    --opt hoodie.cleaner.commits.retained=2 "${compact[@]}"
  census "$t"
  hudi_rs_same "$t"
  for n in 16 17; do edge_upsert "$t" "$n" "${off[@]}"; done
  edge_clean "$t" --option hoodie.clean.commits.retained=2
  census "$t"
  spark_step "$t" 4 --read-only
  hudi_rs_same "$t"
  spark_cleans "$t" 4
  # Spark's newest clean and our newest, field by field (values that name instants, files
  # and times differ by nature; the fields, their types and the fixed values must not).
  "$py" - "$t.cleans4.json" "$t.our_cleans" "$type" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
ours = {l.strip() for l in open(sys.argv[2]) if l.strip()}
inst = r["instants"]
def pick(suffix, mine):
    names = sorted(n for n in inst if n.endswith(suffix) and (n[:17] in ours) == mine)
    return names[-1] if names else None
def shape(v):
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()} if len(v) < 8 else {"<map>": shape(next(iter(v.values())))}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    return type(v).__name__
ok = True
for suffix, fixed in ((".clean.requested", ("policy", "version", "filesToBeDeletedPerPartition", "partitionsToBeDeleted", "extraMetadata")),
                      (".clean", ("version", "bootstrapPartitionMetadata", "extraMetadata"))):
    spark_n, our_n = pick(suffix, False), pick(suffix, True)
    if not spark_n and sys.argv[3] == "mor":
        # Spark cleans before its inline compaction: the slices its earlier compaction left
        # were ours to clean already, so its cleaner found nothing (the COW table compares).
        print("  compare %s: Spark's cleaner had nothing to clean on this table" % suffix); continue
    if not spark_n or not our_n:
        print("  compare %s: missing (Spark %s, ours %s)" % (suffix, spark_n, our_n)); ok = False; continue
    s, o = inst[spark_n], inst[our_n]
    same_schema = s["schema"] == o["schema"]
    sr, orr = s["record"], o["record"]
    fields = sorted(set(sr) | set(orr))
    diffs = [f for f in fields if (f in fixed and sr.get(f) != orr.get(f)) or shape(sr.get(f)) != shape(orr.get(f))]
    print("  %s: Spark's %s vs ours %s: writer schema %s; %d fields, %s" % (
        suffix, spark_n, our_n, "identical" if same_schema else "DIFFERENT", len(fields),
        "same shape and fixed values" if not diffs else "DIFFERENT in %s" % diffs))
    if suffix == ".clean.requested":
        paths = [i["filePath"] for v in orr["filePathsToBeDeletedPerPartition"].values() for i in v]
        spaths = [i["filePath"] for v in sr["filePathsToBeDeletedPerPartition"].values() for i in v]
        print("    file paths: Spark %s, ours %s" % (spaths[0] if spaths else "-", paths[0] if paths else "-"))
    else:
        names = [n for p in orr["partitionMetadata"].values() for n in p["successDeleteFiles"]]
        print("    deleted names have no directory: %s" % all("/" not in n for n in names))
    ok &= same_schema and not diffs
sys.exit(0 if ok else 1)
PY
done
t="$out/mdt"
echo "mdt (the metadata table's own clean)"
"$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
  --record-key id --partition-by region --ordering ts --type mor > /dev/null
for n in $(seq 1 34); do edge_upsert "$t" "$n"; done
"$py" - "$t" <<'PY' || status=1
import os, sys
tl = os.listdir(os.path.join(sys.argv[1], ".hoodie", "metadata", ".hoodie", "timeline"))
cleans = sorted(n for n in tl if n.endswith(".clean"))
init = [n for d, _, ns in os.walk(os.path.join(sys.argv[1], ".hoodie", "metadata")) for n in ns
        if n.endswith("_00000000000000000.hfile")]
print("  hudi-edge: 34 upserts; %d metadata-table cleans; initial metadata base files left: %d" % (len(cleans), len(init)))
sys.exit(0 if cleans and not init else 1)
PY
spark_step "$t" 1 --read-only
hudi_rs_same "$t"
spark_step "$t" 2 --new-key-per-run
edge_upsert "$t" 35
spark_step "$t" 3 --read-only
hudi_rs_same "$t"

echo "status $status; $((SECONDS - start)) s"
exit $status
