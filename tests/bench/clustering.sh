#!/usr/bin/env bash
# What clustering saves a full scan: a partitioned Merge-On-Read table (metadata table with
# the record index) written in N small upserts that each open new file groups
# (`hoodie.parquet.small.file.limit=0`, inline compaction off), then `hudi-edge cluster`:
# full-scan requests, bytes and file groups before and after, and the clustering's own cost.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/bench/clustering.sh [N] [OUT_DIR]
#        (results: tests/bench/results/clustering.txt)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-30}
out=${2:-target/tmp/bench-clustering}
bin=${HUDI_EDGE_BIN:-target/debug/hudi-edge}
rm -rf "$out" && mkdir -p "$out"
t=$out/t
"$bin" create "$t" --columns 'id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE' \
  --record-key id --partition-by region --ordering ts --type mor \
  --option hoodie.metadata.record.index.enable=true > /dev/null
for i in $(seq 1 "$n"); do
  : > "$out/in.jsonl"
  for j in 0 1 2 3 4 5; do
    k=$((i * 6 + j)); u=$(((i * 7 + j * 3) % (i * 6)))
    regions=(eu us ap)
    echo "{\"id\":\"K$k\",\"ts\":$i,\"region\":\"${regions[$((k % 3))]}\",\"v\":$k}" >> "$out/in.jsonl"
    echo "{\"id\":\"K$u\",\"ts\":$((1000 + i)),\"region\":\"${regions[$((u % 3))]}\",\"v\":$i}" >> "$out/in.jsonl"
  done
  "$bin" write "$t" --input "$out/in.jsonl" --option hoodie.parquet.small.file.limit=0 \
    --option hoodie.compact.inline=false > /dev/null
done
scan() { # label
  "$bin" read "$t" --stats 2> "$out/stats.json" > "$out/rows.jsonl"
  local groups
  groups=$("$bin" file-groups "$t" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["groups"]))')
  python3 - "$1" "$out/stats.json" "$(wc -l < "$out/rows.jsonl")" "$groups" <<'PY'
import json, sys
s = json.load(open(sys.argv[2]))
io = s["total_io"]
print(f"{sys.argv[1]}: {sys.argv[3]} rows, {sys.argv[4]} file groups; full scan {io.get('requests')} requests, {io.get('bytes')} bytes")
PY
}
echo "# tests/bench/clustering.sh $n ($(date -u +%F), $("$bin" --version), local files)"
scan "after $n upserts"
"$bin" cluster "$t" --json > "$out/cluster.json"
python3 - "$out/cluster.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["completed"]:
    print(f"cluster {c['instant']}: {c['groups']} groups, {len(c['file_groups_replaced'])} file groups "
          f"({c['bytes_replaced']} bytes) into {len(c['files_written'])} files ({c['records_written']} records, "
          f"{c['bytes_written']} bytes); {c['io']['requests']} requests, {c['elapsed_ms']} ms")
PY
scan "after the clustering"
