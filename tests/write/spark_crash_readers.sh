#!/usr/bin/env bash
# Apache Hudi Spark 1.1.1 as a third reader of every table a crashed table service left: the
# crash-at-every-request tests of cleaning (data table, metadata table), archival, compaction,
# clustering and a write's inline clustering keep each crashed table (HUDI_EDGE_KEEP_CRASHED),
# then Spark reads them all in one session, and its snapshot is compared with ours and
# hudi-rs's. Prints one line per service and the tables where a reader differs; results in
# tests/bench/results/spark_crash_readers.txt. Dev-only (needs tests/spark/setup.sh).
#   tests/write/spark_crash_readers.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}/crash_readers
source tests/write/spark_lib.sh
kept="$out/kept"
mkdir -p "$kept"
HUDI_EDGE_KEEP_CRASHED="$kept" cargo test -q \
  --test write_clean --test write_archive --test write_compaction --test write_clustering -- \
  a_clean_cut_short_at_any_request a_metadata_table_clean_cut_short_at_any_request \
  a_crash_at_any_request_of_an_archival a_crashed_compaction_is_finished \
  a_crashed_clustering_is_finished a_write_crashed_in_its_inline_clustering > "$out/tests.log" 2>&1
mapfile -t tables < <(find "$kept" -mindepth 1 -maxdepth 1 -type d | sort -V)
echo "${#tables[@]} crashed tables kept"
flock /tmp/spark.lock tests/spark/run.sh tests/write/spark_read_many.py "${tables[@]}" 2> "$out/spark.log"
for t in "${tables[@]}"; do
  ours "$t" > "$t.ours.jsonl"
  "$py" tests/write/hudi_rs_rows.py "$t" > "$t.hudi-rs.jsonl" 2> "$t.hudi-rs.err" || true
done
"$py" - "${tables[@]}" <<'PY' | tee tests/bench/results/spark_crash_readers.txt
import collections, json, os, re, sys

def rows(path):
    if not os.path.exists(path):
        return None
    return sorted(json.dumps(json.loads(l), sort_keys=True) for l in open(path) if l.strip())

by_service = collections.OrderedDict()
differ = []
for t in sys.argv[1:]:
    service = re.sub(r"_\d+$", "", os.path.basename(t))
    spark, ours, hrs = rows(t + ".spark.jsonl"), rows(t + ".ours.jsonl"), rows(t + ".hudi-rs.jsonl")
    s = by_service.setdefault(service, {"tables": 0, "same": 0, "rows": set()})
    s["tables"] += 1
    if spark is not None and spark == ours == hrs:
        s["same"] += 1
        s["rows"].add(len(ours))
    else:
        why = "spark failed: " + open(t + ".spark.error").read()[:200] if spark is None else \
            f"spark {len(spark)} rows, ours {len(ours or [])}, hudi-rs {len(hrs or [])}"
        differ.append(f"{os.path.basename(t)}: {why}")
print("Spark 1.1.1, hudi-edge and hudi-rs on every table a crashed service left:")
for service, s in by_service.items():
    print(f"  {service}: {s['same']}/{s['tables']} crash points read the same in all three "
          f"(rows per snapshot: {sorted(s['rows'])})")
print(f"differences: {len(differ)}")
for d in differ:
    print("  " + d)
sys.exit(1 if differ else 0)
PY
