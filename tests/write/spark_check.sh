#!/usr/bin/env bash
# Reads the tables tests/write.rs wrote (target/tmp/write/*) with Apache Hudi Spark 1.1.1 and
# with this engine, and compares the rows (dev-only: needs tests/spark/setup.sh; ~40 s per table).
#   cargo test --test write && tests/write/spark_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark}
mkdir -p "$out"
cargo build -q --bin hudi-edge
for t in target/tmp/write/*/; do
  n=$(basename "$t")
  tests/spark/run.sh tests/spark/read_table.py "$t" > "$out/$n.spark.jsonl" 2> "$out/$n.spark.err"
  target/debug/hudi-edge read "$t" --format oracle-jsonl > "$out/$n.ours.jsonl"
done
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def canon(line):
    def s(v):
        if isinstance(v, dict): return {k: s(v[k]) for k in sorted(v)}
        if isinstance(v, list): return [s(x) for x in v]
        return v
    return json.dumps(s(json.loads(line)), sort_keys=True)
for f in sorted(glob.glob(f"{out}/*.spark.jsonl")):
    n = os.path.basename(f)[: -len(".spark.jsonl")]
    spark = sorted(canon(l) for l in open(f) if l.strip())
    ours = sorted(canon(l) for l in open(f"{out}/{n}.ours.jsonl") if l.strip())
    print(f"{n}: spark {len(spark)} rows, hudi-edge {len(ours)} rows, identical={spark == ours}")
PY
