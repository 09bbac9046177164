#!/usr/bin/env bash
# Apache Hudi Spark 1.1.1 rolls back what a crashed hudi-edge write left: for a MOR and a COW
# table with a metadata table, a write crashed just before its commit point (every data and
# metadata file written, nothing completed), then a Spark upsert (EAGER rollback of failed
# writes) and the three readers (Spark, hudi-edge, hudi-rs) compared. Dev-only (needs
# tests/spark/setup.sh); prints one line per table.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/venv/bin/python"
out=$(mktemp -d)
cargo build -q --bin hudi-edge
for fixture in sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle sample_table/cow/v9_txns_simple_overwrite; do
  name=$(basename "$fixture")
  table="$out/$name"
  # The last request before the commit point: the largest k that leaves our instant pending.
  for k in $(seq 30 -1 1); do
    rm -rf "$table"
    (cd "$out" && unzip -q "$OLDPWD/tests/data/fixtures/tables/$fixture.zip")
    HUDI_EDGE_CRASH_DIR="$table" HUDI_EDGE_CRASH_AT="$k" \
      cargo test -q --test write_crash leave_a_crashed_write -- --ignored --exact > /dev/null 2>&1 || continue
    last=$(target/debug/hudi-edge timeline "$table" | tail -1)
    case "$last" in *inflight*|*requested*) break ;; esac
  done
  pending=$(ls "$table/.hoodie/timeline" | grep -c 'inflight$' || true)
  tests/spark/run.sh tests/write/spark_after.py "$table" > "$out/$name.spark.jsonl" 2> "$out/$name.err"
  target/debug/hudi-edge read "$table" --format oracle-jsonl > "$out/$name.ours.jsonl"
  "$py" tests/write/hudi_rs_rows.py "$table" > "$out/$name.hudi-rs.jsonl"
  rollbacks=$(ls "$table/.hoodie/timeline" | grep -c '\.rollback$' || true)
  left=$(ls "$table/.hoodie/timeline" | grep -c 'inflight$' || true)
  "$py" - "$out/$name" "$pending" "$rollbacks" "$left" <<'PY'
import json, sys
base, pending, rollbacks, left = sys.argv[1:]
def rows(p):
    def s(v):
        if isinstance(v, dict): return {k: s(v[k]) for k in sorted(v)}
        if isinstance(v, list): return [s(x) for x in v]
        return v
    return sorted(json.dumps(s(json.loads(l)), sort_keys=True) for l in open(p) if l.strip())
spark, ours, hrs = rows(base + ".spark.jsonl"), rows(base + ".ours.jsonl"), rows(base + ".hudi-rs.jsonl")
print(f"{base.rsplit('/', 1)[1]}: inflight before Spark {pending}, rollback instants after {rollbacks}, "
      f"inflight after {left}; rows spark {len(spark)} hudi-edge {len(ours)} hudi-rs {len(hrs)}; "
      f"identical {spark == ours == hrs}")
PY
done
