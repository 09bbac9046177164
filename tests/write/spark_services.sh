#!/usr/bin/env bash
# Tables an edge job writes get their table services from Apache Hudi Spark 1.1.1, and the
# edge job keeps writing after them: the arrangement where a JVM writer shares the table.
# hudi-edge's own services keep Hudi's defaults (the cleaner keeps 10 commits, archival acts
# at 30 instants, Merge-On-Read compaction after 5 delta commits), so within these few commits
# only the MOR table's first compaction is hudi-edge's; every clean and archival is Spark's.
# For a COW and a MOR table created by the CLI:
#   1. six small upserts by hudi-edge (new keys and updates: many file slices, log files and
#      instants);
#   2. Spark upserts with its metadata table on (built from a listing) and its services run
#      inline, set to act at once: compaction (MOR), the cleaner (keep 1 commit), archival
#      (keep 2 to 3 instants); Spark's snapshot against ours, and hudi-rs against ours;
#   3. three more upserts by hudi-edge on the compacted, cleaned and archived table; Spark
#      reads them and checks its metadata table (files procedure, record index);
#   4. Spark's services again (they now clean, compact and archive what hudi-edge wrote), then
#      one more hudi-edge upsert and Spark's checks; hudi-rs against ours;
#   5. Spark updates a key with another partition value (kept in its partition by the record
#      index): Spark's snapshot against ours.
# Dev-only (needs tests/spark/setup.sh): tests/write/spark_services.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-services}
source tests/write/spark_lib.sh

# Upsert $2 into table $1: four rows, keys ($2 .. $2+3) mod 10, ordering field $2.
edge_upsert() {
  local t=$1 n=$2 f="$1.in$2.jsonl"
  : > "$f"
  for k in 0 1 2 3; do
    local id=$(( (n + k) % 10 ))
    echo "{\"id\":$id,\"ts\":$((100 + n)),\"region\":\"$([ $((id % 2)) = 0 ] && echo eu || echo us)\",\"note\":\"edge-$n\"}" >> "$f"
  done
  "$bin" write "$t" --input "$f" > /dev/null
}

# What the timeline holds: instants by action, archived ones, base and log files on storage.
census() {
  local t=$1
  "$py" - "$t" <<'PY'
import collections, os, sys
t = sys.argv[1]
tl = os.path.join(t, ".hoodie", "timeline")
done = collections.Counter(n.split(".")[1] for n in os.listdir(tl) if "_" in n.split(".")[0] and "." in n)
history = [n for n in os.listdir(os.path.join(tl, "history")) if n.endswith(".parquet")]
files = [n for d, _, ns in os.walk(t) if "/.hoodie" not in d for n in ns]
base = sum(n.endswith(".parquet") for n in files)
logs = sum(".log." in n for n in files)
print("  timeline: %s; %d archive (LSM history) files; on storage %d base files, %d log files" % (
    ", ".join("%d %s" % (c, a) for a, c in sorted(done.items())), len(history), base, logs))
PY
}

for type in cow mor; do
  t="$out/$type"
  echo "$type"
  "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
    --record-key id --partition-by region --ordering ts --type "$type" > /dev/null
  for n in 1 2 3 4 5 6; do edge_upsert "$t" "$n"; done
  echo "  hudi-edge: six upserts"
  census "$t"
  spark_step "$t" 1 --with-metadata --services --new-key-per-run
  census "$t"
  hudi_rs_same "$t"
  for n in 7 8 9; do edge_upsert "$t" "$n"; done
  echo "  hudi-edge: three upserts after Spark's services"
  spark_step "$t" 2 --read-only
  spark_step "$t" 3 --services --new-key-per-run
  census "$t"
  edge_upsert "$t" 10
  echo "  hudi-edge: one upsert after Spark's services again"
  spark_step "$t" 4 --read-only
  census "$t"
  hudi_rs_same "$t"
  # A key Spark updates with another partition value under its record index stays in its
  # partition with that value in its data: Spark shows the path's value, so do we (hudi-rs
  # shows the file's, so it is not compared here).
  spark_step "$t" 5 --move-key --new-key-per-run
done
exit $status
