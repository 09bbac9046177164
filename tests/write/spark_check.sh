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
mkdir -p "$out"
py="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/venv/bin/python"
# HUDI_EDGE_WRITE_TABLES: where tests/write.rs wrote (another CARGO_TARGET_DIR's tmp/write);
# HUDI_EDGE_BIN: a built CLI; WRITE_ONLY: a glob of table names to check.
tables=${HUDI_EDGE_WRITE_TABLES:-target/tmp/write}
if [ -z "${HUDI_EDGE_BIN:-}" ]; then cargo build -q --bin hudi-edge; fi
bin=${HUDI_EDGE_BIN:-target/debug/hudi-edge}
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
      u.get("completionTime", u.get("completion_time")))')
  [ -n "${u:-}" ] || { echo "$n: fewer than three completed writes, skipped"; continue; }
  queries=(snapshot "as_of=$u" "as_of=$prev" "incremental=$prev_c,$u_c")
  tests/spark/run.sh tests/write/spark_queries.py "$t" "${queries[@]}" > "$out/$n.spark.jsonl" 2> "$out/$n.spark.err"
  : > "$out/$n.ours.jsonl"
  for q in "${queries[@]}"; do
    case "$q" in
      snapshot) args=() ;;
      as_of=*) args=(--as-of "${q#as_of=}") ;;
      incremental=*) r=${q#incremental=}; args=(--query incremental --start "${r%,*}" --end "${r#*,}") ;;
    esac
    "$bin" read "$t" "${args[@]}" --format oracle-jsonl | "$py" -c '
import json, sys
q = sys.argv[1]
for line in sys.stdin:
    print(json.dumps({"query": q, "row": json.loads(line)}, sort_keys=True))' "$q" >> "$out/$n.ours.jsonl"
  done
  "$py" - "$out/$n" "${queries[@]}" <<'PY'
import json, sys
base, queries = sys.argv[1], sys.argv[2:]
def load(p):
    by = {}
    for line in open(p):
        if line.strip():
            d = json.loads(line)
            by.setdefault(d["query"], []).append(json.dumps(d["row"], sort_keys=True))
    return {k: sorted(v) for k, v in by.items()}
spark, ours = load(base + ".spark.jsonl"), load(base + ".ours.jsonl")
cells = []
for q in queries:
    s, o = spark.get(q, []), ours.get(q, [])
    cells.append(f"{q.split('=')[0]} {len(s)}/{len(o)} {'same' if s == o else 'DIFFERENT'}")
print(base.rsplit("/", 1)[1] + ": " + "; ".join(cells))
PY
done
