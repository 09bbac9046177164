# Shared by tests/write/spark_compaction.sh and spark_clustering.sh (sourced after
# spark_lib.sh): Spark runs of tests/write/spark_compaction.py under the shared lock, tables
# `hudi-edge create` makes, hudi-edge upserts, and everyone reading the same rows.

spark() { # TABLE PREFIX ACTION...
  flock /tmp/spark.lock tests/spark/run.sh tests/write/spark_compaction.py "$@" > "$2.out" 2> "$2.err" \
    || { echo "  SPARK RUN FAILED ($(basename "$2")): $(grep -v '^\s*at ' "$2.err" | grep -iE 'exception|error' | head -3)"; status=1; }
  local failed
  failed=$(grep -h 'ACTION FAILED\|UPSERT FAILED' "$2.err" | head -3)
  [ -n "$failed" ] && { echo "  $failed"; status=1; }
  return 0
}

create() { # TABLE [TYPE: mor (default) or cow]
  "$bin" create "$1" --columns 'id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE' \
    --record-key id --partition-by region --ordering ts --type "${2:-mor}" \
    --option hoodie.metadata.record.index.enable=true > /dev/null
}

# hudi-edge upsert N into TABLE: 4 updates of keys written before, 3 new keys; more write
# configs after.
edge_upsert() { # TABLE N [--option K=V]...
  local t=$1 n=$2; shift 2
  "$py" - "$n" > "$t.in$n.jsonl" <<'PY'
import json, sys
n = int(sys.argv[1])
regions = ["eu", "us", "ap"]
rows = {}
for j in range(4):
    k = (n * 5 + j * 7) % max(1, 3 * n)
    rows[k] = {"id": f"K{k:02d}", "ts": 1000 * n + j, "region": regions[k % 3], "v": n + j / 10}
for j in range(3):
    k = 3 * n + j
    rows[k] = {"id": f"K{k:02d}", "ts": 100 + n, "region": regions[k % 3], "v": float(k)}
for r in rows.values():
    print(json.dumps(r))
PY
  "$bin" write "$t" --input "$t.in$n.jsonl" --json "$@" > "$t.w$n.json" \
    || { echo "  hudi-edge upsert $n FAILED"; status=1; }
}

# Everyone reads TABLE: Spark's rows from PREFIX (snapshot and read-optimized) against ours,
# hudi-rs against ours; then Spark's metadata-table checks of PREFIX's check N.
agree() { # TABLE PREFIX CHECK_N
  local t=$1 p=$2
  ours "$t" > "$p.ours.jsonl"
  "$bin" read "$t" --query read_optimized --format oracle-jsonl > "$p.ours_ro.jsonl"
  same "Spark vs hudi-edge, snapshot" "$p.snapshot.jsonl" "$p.ours.jsonl"
  same "Spark vs hudi-edge, read-optimized" "$p.ro.jsonl" "$p.ours_ro.jsonl"
  "$py" tests/write/hudi_rs_rows.py "$t" > "$p.hudi_rs.jsonl" 2> "$p.hudi_rs.err" \
    || { echo "  hudi-rs read FAILED: $(tail -1 "$p.hudi_rs.err")"; status=1; }
  same "hudi-rs vs hudi-edge, snapshot" "$p.hudi_rs.jsonl" "$p.ours.jsonl"
  if [ -s "$p.check$3.report.json" ]; then mdt_summary "$p.check$3.report.json"; else echo "  no Spark check report"; status=1; fi
}

