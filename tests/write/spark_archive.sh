#!/usr/bin/env bash
# Timelines hudi-edge archives, against Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh and the hudi-rs venv). For a COW and a MOR table created by the CLI:
#   1. 36 small hudi-edge upserts with cleaning off: both timelines archived automatically
#      into their LSM histories (Java's defaults: 20 to 30 commits kept);
#   2. Spark's Java classes list the same archived instants as `hudi-edge timeline
#      --archived` (requested time, completion time, action), for the data table and the
#      metadata table; Spark's snapshot, time travel to an archived commit and an incremental
#      range from it equal ours; hudi-rs's snapshot equals ours;
#   3. Spark upserts with its services on (archival keeps 2 to 3 instants, history layers
#      merged two files at a time, so its archiver rewrites the files hudi-edge wrote), and
#      reads; we read what Spark archived;
#   4. 12 more hudi-edge upserts with the same small settings (our archiver merges Spark's
#      history files); Spark, hudi-rs and we agree again, on rows and archived instants.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_archive.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_archive.txt; one JVM at a time)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-archive}
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS
spark() { flock /tmp/spark.lock tests/spark/run.sh "$@"; }

edge_upsert() { # TABLE N [--option K=V ...]
  local t=$1 n=$2 f="$1.in.jsonl"; shift 2
  : > "$f"
  for k in 0 1 2 3; do
    local id=$(( (n * 4 + k) % 40 ))
    echo "{\"id\":$id,\"ts\":$((100 + n)),\"region\":\"$([ $((id % 2)) = 0 ] && echo eu || echo us)\",\"note\":\"edge-$n\"}" >> "$f"
  done
  "$bin" write "$t" --input "$f" "$@" > "$t.write$n.json" || { echo "  write $n FAILED"; status=1; }
}

# Archived instants (data, metadata) as we list them, in spark_archive.py's form.
our_archived() {
  "$py" - "$("$bin" timeline "$1" --archived --json)" "$("$bin" timeline "$1/.hoodie/metadata" --archived --json 2>/dev/null || echo '{"instants":[]}')" <<'PY'
import json, sys
def archived(text):
    v = json.loads(text)
    return sorted([i["requested_time"], i["completion_time"], i["action"]]
                  for i in v["instants"] if i.get("archived") and i["state"] == "completed")
print(json.dumps({"data": archived(sys.argv[1]), "metadata": archived(sys.argv[2])}))
PY
}

archived_agree() { # TABLE STEP
  local t=$1
  spark tests/write/spark_archive.py "$t" > "$t.spark_archived$2.json" 2> "$t.spark_archived$2.err" \
    || { tail -5 "$t.spark_archived$2.err"; status=1; }
  our_archived "$t" > "$t.our_archived$2.json"
  "$py" - "$t.spark_archived$2.json" "$t.our_archived$2.json" <<'PY' || status=1
import json, sys
s, o = (json.load(open(p)) for p in sys.argv[1:3])
bad = 0
for part in ("data", "metadata"):
    same = s[part] == o[part]
    bad += not same
    print(f"  archived {part}-table instants, Spark vs hudi-edge: "
          + (f"same ({len(o[part])})" if same else f"DIFFERENT (Spark {len(s[part])}, ours {len(o[part])})"))
    if not same:
        print("    only Spark:", [i for i in s[part] if i not in o[part]][:3])
        print("    only ours:", [i for i in o[part] if i not in s[part]][:3])
sys.exit(1 if bad else 0)
PY
}

queries_agree() { # TABLE STEP QUERY...
  local t=$1 step=$2; shift 2
  spark tests/write/spark_queries.py "$t" "$@" > "$t.spark_q$step.jsonl" 2> "$t.spark_q$step.err" \
    || { tail -5 "$t.spark_q$step.err"; status=1; }
  ours_queries "$t" "$t.our_q$step.jsonl" "$@"
  same "Spark vs hudi-edge ($*)" "$t.spark_q$step.jsonl" "$t.our_q$step.jsonl"
}

census() { # TABLE
  "$py" - "$1" <<'PY'
import os, sys
t = sys.argv[1]
for name, tl in (("data", os.path.join(t, ".hoodie", "timeline")),
                 ("metadata", os.path.join(t, ".hoodie", "metadata", ".hoodie", "timeline"))):
    active = [n for n in os.listdir(tl) if os.path.isfile(os.path.join(tl, n))]
    h = os.path.join(tl, "history")
    hist = sorted(os.listdir(h)) if os.path.isdir(h) else []
    print(f"  {name} timeline: {len(active)} active files; history: "
          + ", ".join(hist))
PY
}

small=(--option hoodie.keep.min.commits=2 --option hoodie.keep.max.commits=3
       --option hoodie.clean.commits.retained=1 --option hoodie.timeline.compaction.batch.size=2
       --option hoodie.metadata.compact.max.delta.commits=1)

for type in cow mor; do
  t="$out/$type"
  echo "$type"
  "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
    --record-key id --partition-by region --ordering ts --type "$type" > /dev/null
  # Cleaning off here: time travel to archived commits needs their files.
  for n in $(seq 1 36); do edge_upsert "$t" "$n" --option hoodie.clean.automatic=false; done
  echo "  hudi-edge: 36 upserts, archival automatic (cleaning off)"
  census "$t"
  first=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"][2][0])' <(our_archived "$t"))
  end=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"][-1][0])' <(our_archived "$t"))
  archived_agree "$t" 1
  queries_agree "$t" 1 snapshot "as_of=$first" "incremental=$first,$end"
  hudi_rs_same "$t"
  spark_step "$t" 1 --services --new-key-per-run --opt hoodie.timeline.compaction.batch.size=2
  census "$t"
  archived_agree "$t" 2
  for n in $(seq 37 48); do edge_upsert "$t" "$n" "${small[@]}"; done
  echo "  hudi-edge: 12 upserts after Spark's services, small archival settings"
  census "$t"
  archived_agree "$t" 3
  spark_step "$t" 2 --read-only
  hudi_rs_same "$t"
done
echo "overall: $([ $status = 0 ] && echo PASS || echo FAIL) in $((SECONDS - start)) s"
exit $status
