#!/usr/bin/env bash
# Storage growth with and without automatic cleaning: a Copy-On-Write and a Merge-On-Read
# table created by the CLI (partitioned, metadata table on), COMMITS upserts of 100 rows
# each (keys drawn from 1000, so most rows update), once with Hudi's default cleaning
# (keep 10 commits) and once with hoodie.clean.automatic=false. Prints bytes and files on
# storage (data files, the metadata table) and the time of the writes.
# Usage: tests/bench/clean_growth.sh [COMMITS] [OUT_DIR]   (HUDI_EDGE_BIN: the CLI to use)
# Results: tests/bench/results/clean_growth.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
commits=${1:-60}
out=${2:-target/tmp/clean-growth}
if [ -z "${HUDI_EDGE_BIN:-}" ]; then cargo build -q --release --bin hudi-edge; fi
bin=${HUDI_EDGE_BIN:-target/release/hudi-edge}
rm -rf "$out" && mkdir -p "$out"

size() { # bytes and files under $1, excluding paths matching $2
  find "$1" -type f ! -path "$2" -printf '%s\n' | awk '{b+=$1; n++} END {printf "%.1f MB in %d files", b/1e6, n}'
}

echo "$commits upserts of 100 rows (1000 keys, 2 partitions), $(basename "$bin") CLI, $(date -u +%F)"
for type in cow mor; do
  for mode in on off; do
    t="$out/$type-$mode"
    "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
      --record-key id --partition-by region --ordering ts --type "$type" > /dev/null
    opts=()
    [ "$mode" = off ] && opts=(--option hoodie.clean.automatic=false)
    start=$(date +%s%N)
    cleans=0
    for n in $(seq 1 "$commits"); do
      awk -v n="$n" 'BEGIN { srand(n); for (i = 0; i < 100; i++) { id = int(rand() * 1000);
        printf "{\"id\":%d,\"ts\":%d,\"region\":\"%s\",\"note\":\"commit %d row %d\"}\n", id, n, (id % 2 ? "us" : "eu"), n, i } }' \
        > "$out/in.jsonl"
      r=$("$bin" write "$t" --input "$out/in.jsonl" "${opts[@]}" --json)
      cleans=$((cleans + $(echo "$r" | grep -c '"table": "data"' || true)))
    done
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "$type cleaning $mode: data $(size "$t" "$t/.hoodie/*"); metadata table $(size "$t/.hoodie/metadata" "/nowhere"); \
$cleans data cleans; $ms ms for the writes"
  done
done
