#!/usr/bin/env bash
# Apache Hudi Spark 1.1.1 reads the snapshot a multi-writer run left (multi_writer.py --keep
# DIR) and must return exactly the rows hudi-edge returns (full rows, read_table.py's
# encoding on both sides). Dev-only (needs tests/spark/setup.sh).
#   tests/write/multi_writer_spark.sh DIR [HUDI_EDGE_BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(cd "$1" && pwd)
bin=${2:-${CARGO_TARGET_DIR:-target}/debug/hudi-edge}
py="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/venv/bin/python"
work=$(mktemp -d "${TMPDIR:-/tmp}/mw-spark.XXXXXX")
trap 'rm -rf "$work"' EXIT
tests/spark/run.sh tests/write/spark_queries.py "$dir" snapshot > "$work/spark.jsonl" 2> "$work/spark.err" \
  || { tail -20 "$work/spark.err" >&2; exit 1; }
"$bin" read "$dir" --format oracle-jsonl > "$work/ours.jsonl"
"$py" - "$work" "$(basename "$dir")" <<'PY'
import json, sys
work, name = sys.argv[1], sys.argv[2]
spark = sorted(json.dumps(json.loads(l)["row"], sort_keys=True) for l in open(f"{work}/spark.jsonl") if l.strip())
ours = sorted(json.dumps(json.loads(l), sort_keys=True) for l in open(f"{work}/ours.jsonl") if l.strip())
same = spark == ours
print(f"{name}: Spark {len(spark)} rows, hudi-edge {len(ours)} rows, {'same' if same else 'DIFFERENT'}")
sys.exit(0 if same else 1)
PY
