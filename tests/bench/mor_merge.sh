#!/usr/bin/env bash
# MOR merge throughput, side by side in one run: hudi-edge native (release CLI, streaming
# Arrow to a file), hudi-edge wasm in Node (one Arrow table from the npm package's read(), its
# read module over its node:fs storage; and batch by batch through stream()), and
# the PyPI `hudi` package (hudi-rs, whose read()
# collects every batch), reading the same Merge-On-Read snapshot. Prints rows/s, wall time,
# peak RSS and the ratios.
#
# Usage: tests/bench/mor_merge.sh [TABLE_DIR] [RUNS]
# Default table: the 1M-row MOR table written by Apache Hudi Spark
# (tests/spark/make_bench_tables.py → $HUDI_EDGE_CACHE/tables/bench_mor_v9).
# Needs: .ci/setup (venv with hudi), `cargo build --release` (or HUDI_EDGE_BIN=a built CLI),
# `.ci/build-wasm` and the package (`npm run build` in pkg-config, or HUDI_EDGE_PKG_DIST).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
table="${1:-$cache/tables/bench_mor_v9}"
runs="${2:-3}"
py="$cache/venv/bin/python"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
bin="${HUDI_EDGE_BIN:-$target/release/hudi-edge}"
[ -x "$bin" ] || cargo build --release --bin hudi-edge
[ -f "$target/wasm-node/hudi_edge.js" ] || .ci/build-wasm
[ -n "${HUDI_EDGE_PKG_DIST:-}" ] || [ -f pkg-config/dist/node.js ] || (cd pkg-config && npm run build)
export HUDI_EDGE_WASM_NODE="${HUDI_EDGE_WASM_NODE:-$target/wasm-node}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count_ipc() { "$py" -c "import pyarrow.ipc as i,sys; print(i.open_stream(open(sys.argv[1],'rb')).read_all().num_rows)" "$1"; }

# One field of a reader's JSON line.
field() { "$py" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

echo "table: $table"
logs=$(find "$table" -name '.*.log.*' -not -path '*/.hoodie/*' | wc -l)
bases=$(find "$table" -name '*.parquet' -not -path '*/.hoodie/*' | wc -l)
echo "data files on disk: $bases base, $logs log"

native_s=(); native_rss=()
for _ in $(seq "$runs"); do
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" read "$table" --format arrow > "$tmp/native.arrow"
  read -r s kb < "$tmp/time"; native_s+=("$s"); native_rss+=("$((kb / 1024))")
done
native_rows=$(count_ipc "$tmp/native.arrow")

wasm_s=(); wasm_rss=()
for _ in $(seq "$runs"); do
  out=$(PKG=1 IPC_OUT="$tmp/wasm.arrow" node tests/bench/read_wasm.mjs "$table")
  wasm_s+=("$(field seconds <<<"$out")")
  wasm_rss+=("$(field peak_rss_mb <<<"$out")")
  ipc_mb=$(( $(field ipc_bytes <<<"$out") / 1000000 ))
done
wasm_rows=$(count_ipc "$tmp/wasm.arrow")

# The same through `stream()`: batch by batch, as a long read in a worker would go.
ws_s=(); ws_rss=()
for _ in $(seq "$runs"); do
  out=$(STREAM=1 node tests/bench/read_wasm.mjs "$table")
  ws_s+=("$(field seconds <<<"$out")")
  ws_rss+=("$(field peak_rss_mb <<<"$out")")
  ws_rows=$(field rows <<<"$out")
done

rs_s=(); rs_rss=()
for _ in $(seq "$runs"); do
  out=$("$py" tests/bench/read_hudi_rs.py "$table")
  rs_s+=("$(field seconds <<<"$out")")
  rs_rss+=("$(field peak_rss_mb <<<"$out")")
  rs_rows=$(field rows <<<"$out")
done

"$py" - "$native_rows" "$wasm_rows" "$ws_rows" "$rs_rows" "${native_s[*]}" "${wasm_s[*]}" "${ws_s[*]}" "${rs_s[*]}" "${native_rss[*]}" "${wasm_rss[*]}" "${ws_rss[*]}" "${rs_rss[*]}" "$ipc_mb" <<'PY'
import sys
names = ["hudi-edge native (CLI)", "hudi-edge wasm read() (table)", "hudi-edge wasm stream()", "hudi-rs (PyPI hudi 0.5.0)"]
counts = [int(x) for x in sys.argv[1:5]]
secs = [[float(x) for x in a.split()] for a in sys.argv[5:9]]
rss = [[int(x) for x in a.split()] for a in sys.argv[9:13]]
rows = {n: (c, min(s), max(m)) for n, c, s, m in zip(names, counts, secs, rss)}
print(f"{'reader':28} {'rows':>9} {'best s':>8} {'rows/s':>11} {'peak RSS MB':>12}")
for k, (r, s, m) in rows.items():
    print(f"{k:28} {r:>9} {s:>8.2f} {r / s:>11,.0f} {m:>12}")
base = rows[names[-1]]
for k in names[:-1]:
    r, s, _ = rows[k]
    print(f"ratio {k} / hudi-rs: {(r / s) / (base[0] / base[1]):.2f}x rows/s")
print(f"read() result: {int(sys.argv[13])} MB of Arrow IPC; its peak RSS {max(rss[1])} MB = "
      f"{max(rss[1]) / int(sys.argv[13]):.2f}x the result")
if len(set(counts)) != 1:
    print("NOTE: row counts differ: " + ", ".join(f"{n} {c}" for n, c in zip(names, counts)))
PY
