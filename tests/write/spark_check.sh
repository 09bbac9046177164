#!/usr/bin/env bash
# Apache Hudi Spark 1.1.1 reads every table tests/write.rs wrote (target/tmp/write/*: the
# fixture's commits, then our upsert U and our delete D) and must return what hudi-edge
# returns for: the snapshot, time travel to U and to the commit before U, and the
# incremental query (before U, U] — exactly the upsert's rows. Dev-only (needs
# tests/spark/setup.sh; one Spark session per table).
#   cargo test --test write && tests/write/spark_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark}
# HUDI_EDGE_WRITE_TABLES: where tests/write.rs wrote (another CARGO_TARGET_DIR's tmp/write);
# HUDI_EDGE_BIN: a built CLI; WRITE_ONLY: a glob of table names to check.
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
source tests/write/spark_lib.sh
for t in "$tables"/${WRITE_ONLY:-*}/; do
  n=$(basename "$t")
  prev= prev_c= u= u_c=
  [ -f "$t/.hoodie/hoodie.properties" ] || continue
  # The last three completed writes: the one before U, U, D (requested and completion times).
  read -r prev prev_c u u_c < <("$bin" timeline "$t" --json | "$py" -c '
import json, sys
i = [x for x in json.load(sys.stdin)["instants"]
     if x["state"] == "completed" and x["action"] in ("commit", "deltacommit", "replacecommit")]
if len(i) < 3:
    sys.exit(0)
p, u = i[-3], i[-2]
print(p["requestedTime"] if "requestedTime" in p else p["requested_time"],
      p.get("completionTime", p.get("completion_time")),
      u["requestedTime"] if "requestedTime" in u else u["requested_time"],
      u.get("completionTime", u.get("completion_time")))') || true
  [ -n "${u:-}" ] || { echo "$n: fewer than three completed writes, skipped"; continue; }
  queries=(snapshot "as_of=$u" "as_of=$prev" "incremental=$prev_c,$u_c")
  if ! tests/spark/run.sh tests/write/spark_queries.py "$t" "${queries[@]}" > "$out/$n.spark.jsonl" 2> "$out/$n.spark.err"; then
    echo "$n: Spark failed: $(grep -m1 -oE 'Caused by: .{0,160}' "$out/$n.spark.err" || tail -1 "$out/$n.spark.err")"
    status=1
    continue
  fi
  ours_queries "$t" "$out/$n.ours.jsonl" "${queries[@]}"
  cells=$("$py" tests/write/compare_queries.py "$out/$n.spark.jsonl" "$out/$n.ours.jsonl" "${queries[@]}") || status=1
  echo "$n: $cells"
done
exit $status
