#!/usr/bin/env bash
# Building a metadata table on an existing 1M-row table (files, column_stats,
# partition_stats, record_index): hudi-edge natively (`hudi-edge index`), hudi-edge in wasm
# (Node, the npm package over local files), and Apache Hudi Spark 1.1.1 building it in its
# first upsert with the metadata table on (tests/write/spark_after.py --with-metadata).
# Each works on its own copy of one table that hudi-edge writes with its metadata table off:
# a partitioned Merge-On-Read table, 8 partitions, 10 inserts of 100,000 rows into new file
# groups each, then an upsert of 20,000 keys (log files). Prints time, requests and peak
# memory (RSS) of each, and the ratios.
# Dev-only: needs a release CLI, .ci/build-wasm + the package build, and tests/spark/setup.sh.
#   tests/bench/mdt_init.sh [ROWS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=${1:-1000000}
bin=${HUDI_EDGE_BIN:-target/release/hudi-edge}
work=${HUDI_EDGE_BENCH_DIR:-target/tmp/bench-mdt-init}
py=${HUDI_EDGE_PY:-$HOME/.cache/hudi-edge/venv/bin/python}
rm -rf "$work" && mkdir -p "$work"
src="$work/source"

"$bin" create "$src" --type mor --name bench \
  --columns "id BIGINT NOT NULL, ts BIGINT, region STRING, amount DECIMAL(12,2), score DOUBLE, customer STRING" \
  --record-key id --partition-by region --ordering ts --option hoodie.metadata.enable=false >/dev/null
batch=$((rows / 10))
for b in $(seq 0 9); do
  "$py" - "$b" "$batch" > "$work/in.jsonl" <<'EOF'
import json, sys
b, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(b * n, (b + 1) * n):
    print(json.dumps({"id": i, "ts": i, "region": f"r{i % 8}", "amount": f"{(i * 7919) % 100000}.25",
                      "score": (i * 31 % 1000) / 7.0, "customer": f"c{i % 5000:05d}"}))
EOF
  "$bin" write "$src" --input "$work/in.jsonl" --operation insert \
    --option hoodie.parquet.small.file.limit=0 >/dev/null
done
"$py" - "$rows" > "$work/in.jsonl" <<'EOF'
import json, sys
n = int(sys.argv[1])
for i in range(0, n, n // 20000):
    print(json.dumps({"id": i, "ts": i + 1, "region": f"r{i % 8}", "amount": "1.00", "score": 0.5, "customer": "updated"}))
EOF
"$bin" write "$src" --input "$work/in.jsonl" >/dev/null
rm -f "$work/in.jsonl"
echo "table: $rows rows, $(find "$src" -name '*.parquet' | wc -l) base files, $(find "$src" -name '.*.log.*' | wc -l) log files, $(du -sh "$src" | cut -f1)"

peak() { grep "Maximum resident" "$1" | awk '{printf "%.0f MiB", $6 / 1024}'; }

# hudi-edge, native.
cp -r "$src" "$work/native"
/usr/bin/time -v "$bin" index "$work/native" --partitions files,column_stats,record_index --json \
  > "$work/native.json" 2> "$work/native.time"
native_ms=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_ms"])' "$work/native.json")
native_req=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["io"]["requests"])' "$work/native.json")
echo "hudi-edge native: ${native_ms} ms, ${native_req} requests, peak $(peak "$work/native.time")"
"$py" -c 'import json,sys
for p in json.load(open(sys.argv[1]))["partitions"]:
    print("  %s: %d records in %d file groups" % (p["partition"], p["records"], p["file_groups"]))' "$work/native.json"

# hudi-edge in wasm (Node, local files through the package's storage object).
cp -r "$src" "$work/wasm"
/usr/bin/time -v node tests/bench/mdt_init_wasm.mjs "$work/wasm" > "$work/wasm.json" 2> "$work/wasm.time"
wasm_ms=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsedMs"])' "$work/wasm.json")
wasm_req=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$work/wasm.json")
echo "hudi-edge wasm (Node): ${wasm_ms} ms, ${wasm_req} requests, peak $(peak "$work/wasm.time")"

# Spark: its first upsert with the metadata table on builds it (the same four partitions).
cp -r "$src" "$work/spark"
start=$(date +%s%3N)
/usr/bin/time -v tests/spark/run.sh tests/write/spark_after.py "$work/spark" --with-metadata \
  > /dev/null 2> "$work/spark.time"
spark_total=$(( $(date +%s%3N) - start ))
# Its build alone: from the upsert's requested instant to the last initial delta commit.
spark_ms=$("$py" - "$work/spark" <<'EOF'
import datetime as dt, os, sys
tl = os.path.join(sys.argv[1], ".hoodie/metadata/.hoodie/timeline")
data = os.path.join(sys.argv[1], ".hoodie/timeline")
parse = lambda t: dt.datetime.strptime(t, "%Y%m%d%H%M%S%f")
done = [f.split("_")[1].split(".")[0] for f in os.listdir(tl) if f.startswith("000000000000000") and "_" in f]
req = sorted(f.split(".")[0].split("_")[0] for f in os.listdir(data) if f.endswith(".deltacommit.requested"))[-1]
print(int((parse(max(done)) - parse(req)).total_seconds() * 1000))
EOF
)
echo "Spark 1.1.1: build ${spark_ms} ms within its upsert (job ${spark_total} ms with JVM start), peak $(peak "$work/spark.time")"
echo "ratios: Spark build / hudi-edge native $("$py" -c "print(round($spark_ms / max($native_ms, 1), 2))")x; wasm / native $("$py" -c "print(round($wasm_ms / max($native_ms, 1), 2))")x"
