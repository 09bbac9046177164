#!/usr/bin/env bash
# SQL over the 1M-row bench table on a Ballista cluster of this machine (a scheduler and two
# executors of hudi-edge), beside one process: wall time of each query both ways, whether the
# rows are the same, and the tasks each executor ran.
#
#   tests/bench/sql_distributed.sh [TABLE]
#
# TABLE defaults to ${HUDI_EDGE_CACHE:-~/.cache/hudi-edge}/tables/bench_cow_v9
# (tests/spark/make_bench_tables.py). The binary is $HUDI_EDGE_BIN, else
# target/release/hudi-edge built here with `--features ballista`. SLOTS (default 1) is the
# tasks each executor runs at once. Exits non-zero when a query's rows differ.
set -euo pipefail
cd "$(dirname "$0")/../.."
TABLE="${1:-${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/tables/bench_cow_v9}"
[ -d "$TABLE/.hoodie" ] || { echo "no Hudi table at $TABLE (tests/spark/make_bench_tables.py makes it)" >&2; exit 2; }
BIN="${HUDI_EDGE_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build -q --release --features ballista --bin hudi-edge
  BIN="${CARGO_TARGET_DIR:-target}/release/hudi-edge"
fi
SLOTS="${SLOTS:-1}"
OUT="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$OUT"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # FILE TEXT
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

S="127.0.0.1:$(port)"
"$BIN" ballista scheduler --bind "$S" 2>"$OUT/scheduler.log" &
PIDS+=($!)
for _ in $(seq 600); do (echo >"/dev/tcp/${S%:*}/${S#*:}") 2>/dev/null && break; sleep 0.1; done
for i in 0 1; do
  "$BIN" ballista executor --scheduler "$S" --bind "127.0.0.1:$(port)" --grpc-port "$(port)" \
    --slots "$SLOTS" --work-dir "$OUT/work-$i" 2>"$OUT/executor-$i.log" &
  PIDS+=($!)
done
for i in 0 1; do wait_for "$OUT/executor-$i.log" "registration succeed"; done

QUERIES=(
  "SELECT category, count(*) AS n, sum(amount) AS total FROM t GROUP BY category"
  "SELECT category, count(*) AS n, sum(amount) AS total FROM t WHERE id BETWEEN 400000 AND 409999 GROUP BY category"
  "SELECT region, count(*) AS n, min(score) AS score, max(event_ts) AS last FROM t WHERE qty > 500 GROUP BY region"
  "SELECT id, customer, amount FROM t ORDER BY amount DESC, id LIMIT 10"
  "SELECT a.region, count(*) AS n, sum(b.qty) AS qty FROM t a JOIN t b ON a.id = b.id + 1 WHERE b.category = 'fuel' GROUP BY a.region"
)

count() { grep -c "$1" "$2" || true; }
now() { date +%s.%N; }
echo "table: $TABLE"
echo "executors: 2 x $SLOTS slot(s); $(nproc) cores"
echo
echo "| query | one process | two executors | same rows | tasks (executor 0 / 1) | Hudi scan partitions (0 / 1) |"
echo "|---|---:|---:|---|---|---|"
status=0
for q in "${QUERIES[@]}"; do
  t0=$(now)
  "$BIN" sql "$q" --table "t=$TABLE" --format jsonl | sort >"$OUT/local.jsonl"
  t1=$(now)
  before=()
  for i in 0 1; do before+=("$(count 'Execute task' "$OUT/executor-$i.log")" "$(count 'hudi-edge: scan' "$OUT/executor-$i.log")"); done
  "$BIN" sql "$q" --table "t=$TABLE" --format jsonl --cluster "df://$S" | sort >"$OUT/cluster.jsonl"
  t2=$(now)
  after=()
  for i in 0 1; do after+=("$(count 'Execute task' "$OUT/executor-$i.log")" "$(count 'hudi-edge: scan' "$OUT/executor-$i.log")"); done
  if cmp -s "$OUT/local.jsonl" "$OUT/cluster.jsonl" && [ -s "$OUT/local.jsonl" ]; then
    same="yes ($(wc -l <"$OUT/local.jsonl") rows)"
  else
    same="NO"; status=1
    diff "$OUT/local.jsonl" "$OUT/cluster.jsonl" | head -5 >&2 || true
  fi
  printf '| `%s` | %.2f s | %.2f s | %s | %d / %d | %d / %d |\n' "$q" \
    "$(awk "BEGIN { print $t1 - $t0 }")" "$(awk "BEGIN { print $t2 - $t1 }")" "$same" \
    $((after[0] - before[0])) $((after[2] - before[2])) $((after[1] - before[1])) $((after[3] - before[3]))
done
exit $status
