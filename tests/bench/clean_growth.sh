#!/usr/bin/env bash
# Storage growth with and without cleaning: a Copy-On-Write table and a Merge-On-Read table
# with the record index, created by the CLI (partitioned, metadata table on), COMMITS upserts
# of 100 rows each (keys drawn from 1000, so most rows update):
#   on       this build, Hudi's default cleaning (keep 10 commits; the metadata table's own
#            clean when due)
#   off      this build with hoodie.clean.automatic=false (the metadata table still cleans
#            itself, as Java's metadata writer does)
#   before   BASELINE_BIN, a build without cleaning (e.g. main before it), when given
# Prints bytes and files on storage: data files, the metadata table's partitions, its
# timeline; and the time of the writes.
# Usage: [BASELINE_BIN=…] tests/bench/clean_growth.sh [COMMITS] [OUT_DIR]   (HUDI_EDGE_BIN: the CLI)
# Results: tests/bench/results/clean_growth.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
commits=${1:-60}
out=${2:-target/tmp/clean-growth}
if [ -z "${HUDI_EDGE_BIN:-}" ]; then cargo build -q --release --bin hudi-edge; fi
bin=${HUDI_EDGE_BIN:-target/release/hudi-edge}
rm -rf "$out" && mkdir -p "$out"

size() { # bytes and files under $1 (find arguments after it)
  local d=$1; shift
  find "$d" -type f "$@" -printf '%s\n' | awk '{b+=$1; n++} END {printf "%.1f MB in %d files", b/1e6, n}'
}

modes=(on off)
[ -n "${BASELINE_BIN:-}" ] && modes+=(before)
echo "$commits upserts of 100 rows (1000 keys, 2 partitions), $(date -u +%F)"
for type in cow mor; do
  for mode in "${modes[@]}"; do
    t="$out/${type}_$mode"
    cli=$bin
    [ "$mode" = before ] && cli=$BASELINE_BIN
    create=()
    [ "$type" = mor ] && create=(--option hoodie.metadata.record.index.enable=true)
    "$cli" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
      --record-key id --partition-by region --ordering ts --type "$type" "${create[@]}" > /dev/null
    opts=()
    [ "$mode" = off ] && opts=(--option hoodie.clean.automatic=false)
    start=$(date +%s%N)
    for n in $(seq 1 "$commits"); do
      awk -v n="$n" 'BEGIN { srand(n); for (i = 0; i < 100; i++) { id = int(rand() * 1000);
        printf "{\"id\":%d,\"ts\":%d,\"region\":\"%s\",\"note\":\"commit %d row %d\"}\n", id, n, (id % 2 ? "us" : "eu"), n, i } }' \
        > "$out/in.jsonl"
      "$cli" write "$t" --input "$out/in.jsonl" "${opts[@]}" > /dev/null
    done
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    mdt_timeline=$(find "$t/.hoodie/metadata/.hoodie" -type f | wc -l)
    cleans=$(find "$t/.hoodie/timeline" -maxdepth 1 -name '*.clean' | wc -l)
    mdt_cleans=$(find "$t/.hoodie/metadata/.hoodie/timeline" -maxdepth 1 -name '*.clean' | wc -l)
    echo "$type $mode: data $(size "$t" -not -path "$t/.hoodie/*"); metadata partitions \
$(size "$t/.hoodie/metadata" -not -path "$t/.hoodie/metadata/.hoodie/*"); metadata timeline $mdt_timeline files; \
$cleans cleans, $mdt_cleans metadata-table cleans; writes ${ms} ms"
  done
done
