#!/usr/bin/env bash
# 100 small commits into a table with a metadata table, and what they do to reads: each
# commit upserts one existing key and inserts one new key (release CLI, local files). Every
# 25 commits: a full snapshot read and a one-key read (record index), with wall time,
# requests and bytes; at the end the row count is checked against the model and PyPI `hudi`.
# hudi-edge never compacts the metadata table (Java writers schedule that), so this shows
# what 100 uncompacted metadata delta commits cost a reader.
#
# Usage: tests/bench/write_many.sh [FIXTURE] [COMMITS]
# Default fixture: sample_table/cow/v9_txns_simple_overwrite (files, column_stats,
# partition_stats, record_index).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
fixture="${1:-sample_table/cow/v9_txns_simple_overwrite}"
commits="${2:-100}"
py="$cache/venv/bin/python"
bin=target/release/hudi-edge
cargo build -q --release --bin hudi-edge
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && unzip -q "$OLDPWD/tests/data/fixtures/tables/$fixture.zip")
table=$(find "$tmp" -maxdepth 2 -name .hoodie -printf '%h\n' | head -1)
rows_before=$("$bin" read "$table" | wc -l)
# One existing row as the template for every commit.
template=$("$bin" read "$table" | head -1 | "$py" -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(json.dumps({k: v for k, v in r.items() if not k.startswith("_hoodie_")}))')
key_field=$(grep '^hoodie.table.recordkey.fields=' "$table/.hoodie/hoodie.properties" | cut -d= -f2)
order_field=$(grep '^hoodie.table.ordering.fields=' "$table/.hoodie/hoodie.properties" | cut -d= -f2)

read_stats() {
  local t0 t1
  t0=$(date +%s%N)
  "$bin" read "$table" --stats > /dev/null 2> "$tmp/stats"
  t1=$(date +%s%N)
  local full_ms=$(( (t1 - t0) / 1000000 ))
  local full_req full_bytes
  full_req=$("$py" -c 'import json,sys; d=json.load(sys.stdin)["total_io"]; print(d["requests"], d["bytes"])' < "$tmp/stats")
  t0=$(date +%s%N)
  "$bin" read "$table" --filter "$key_field = 'BENCH-1'" --stats > /dev/null 2> "$tmp/stats1"
  t1=$(date +%s%N)
  local one_ms=$(( (t1 - t0) / 1000000 ))
  local one_req
  one_req=$("$py" -c 'import json,sys; d=json.load(sys.stdin)["total_io"]; print(d["requests"], d["bytes"])' < "$tmp/stats1")
  local mdt_logs
  mdt_logs=$(find "$table/.hoodie/metadata" -name '.*.log.*' | wc -l)
  printf "%8s %9s %14s %17s %8s %16s\n" "$1" "$mdt_logs" "$full_ms" "$full_req" "$one_ms" "$one_req"
}

printf "%8s %9s %14s %17s %8s %16s\n" commits mdt_logs "full_read_ms" "req bytes" "key_ms" "req bytes"
read_stats 0
total_ms=0
for i in $(seq 1 "$commits"); do
  "$py" - "$template" "$key_field" "$order_field" "$i" > "$tmp/batch.jsonl" <<'PY'
import json, sys
row, key, order, i = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
upd = dict(row); upd[key] = "BENCH-1"; upd[order] = 2_000_000_000_000 + i
new = dict(row); new[key] = f"BENCH-{i + 1}"; new[order] = 2_000_000_000_000 + i
print(json.dumps(upd)); print(json.dumps(new))
PY
  t0=$(date +%s%N)
  "$bin" write "$table" --input "$tmp/batch.jsonl" > /dev/null
  t1=$(date +%s%N)
  total_ms=$(( total_ms + (t1 - t0) / 1000000 ))
  if (( i % 25 == 0 )); then read_stats "$i"; fi
done
echo "mean commit wall time: $(( total_ms / commits )) ms over $commits commits"
rows_after=$("$bin" read "$table" | wc -l)
expected=$(( rows_before + commits + 1 ))
hudi_rs=$("$py" tests/write/hudi_rs_rows.py "$table" | wc -l)
echo "rows: before $rows_before, after $rows_after (expected $expected), hudi-rs $hudi_rs"
[ "$rows_after" = "$expected" ] && [ "$hudi_rs" = "$expected" ]
