#!/usr/bin/env bash
# Peak memory of one native write (the release CLI), against 64 MB + 3 × the input's size:
# 300,000 rows of about 300 bytes as JSON lines (92 MB), inserted into a fresh Merge-On-Read
# and Copy-On-Write table on local files, then the same keys again (every row an update).
# Prints each write's peak RSS (/usr/bin/time %M) and wall time.
#
# Usage: tests/bench/write_memory_native.sh [rows]     (default: 300000)
set -euo pipefail
cd "$(dirname "$0")/../.."
rows="${1:-300000}"
bin=target/release/hudi-edge
cargo build -q --release --bin hudi-edge
work=$(mktemp -d "${TMPDIR:-/tmp}/write-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ~300 bytes a line: a key, an ordering value, one of three regions and a payload.
for ts in 1 2; do
  awk -v n="$rows" -v ts="$ts" 'BEGIN {
    split("us eu apac", region, " ");
    pad = sprintf("%0240d", 0); gsub(/0/, "x", pad);
    for (i = 0; i < n; i++)
      printf "{\"id\":\"K-%09d\",\"ts\":%d,\"region\":\"%s\",\"payload\":\"%s-%09d\"}\n", i, ts, region[i % 3 + 1], pad, i;
  }' > "$work/in$ts.jsonl"
done
size=$(stat -c %s "$work/in1.jsonl")
bound=$(( (64 << 20) + 3 * size ))
echo "input: $rows rows, $size bytes of JSON lines; bound 64 MiB + 3 x input = $((bound >> 20)) MiB"
printf "%-5s %-7s %10s %8s %7s\n" table write peak_MiB seconds within
for kind in mor cow; do
  t="$work/t_$kind"
  "$bin" create "$t" --type "$kind" --columns 'id STRING NOT NULL, ts BIGINT, region STRING, payload STRING' \
    --record-key id --partition-by region --ordering ts > /dev/null
  for ts in 1 2; do
    /usr/bin/time -f "%M %e" -o "$work/time" "$bin" write "$t" --input "$work/in$ts.jsonl" > /dev/null
    read -r kb s < "$work/time"
    within=yes
    [ $((kb * 1024)) -le "$bound" ] || within=no
    printf "%-5s %-7s %10s %8s %7s\n" "$kind" "$([ "$ts" = 1 ] && echo insert || echo update)" "$((kb >> 10))" "$s" "$within"
  done
done
