#!/usr/bin/env bash
# MOR merge throughput, side by side in one run: hudi-edge native (release CLI), hudi-edge
# wasm in Node (JsStorage over node:fs), and the PyPI `hudi` package (hudi-rs), reading the
# same Merge-On-Read snapshot. Prints rows/s, wall time, peak RSS and the ratios.
#
# Usage: tests/bench/mor_merge.sh [TABLE_DIR] [RUNS]
# Default table: the 1M-row MOR table written by Apache Hudi Spark
# (tests/spark/make_bench_tables.py → $HUDI_EDGE_CACHE/tables/bench_mor_v9).
# Needs: .ci/setup (venv with hudi), `cargo build --release`, `.ci/build-wasm`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
table="${1:-$cache/tables/bench_mor_v9}"
runs="${2:-3}"
py="$cache/venv/bin/python"
bin=target/release/hudi-edge
[ -x "$bin" ] || cargo build --release --bin hudi-edge
[ -f target/wasm-node/hudi_edge.js ] || .ci/build-wasm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count_ipc() { "$py" -c "import pyarrow.ipc as i,sys; print(i.open_stream(open(sys.argv[1],'rb')).read_all().num_rows)" "$1"; }

best() { sort -n | head -1; }

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
  out=$(IPC_OUT="$tmp/wasm.arrow" node tests/bench/read_wasm.mjs "$table")
  wasm_s+=("$(echo "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["seconds"])')")
  wasm_rss+=("$(echo "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["peak_rss_mb"])')")
done
wasm_rows=$(count_ipc "$tmp/wasm.arrow")

rs_s=(); rs_rss=()
for _ in $(seq "$runs"); do
  out=$("$py" tests/bench/read_hudi_rs.py "$table")
  rs_s+=("$(echo "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["seconds"])')")
  rs_rss+=("$(echo "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["peak_rss_mb"])')")
  rs_rows=$(echo "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["rows"])')
done

"$py" - "$native_rows" "$wasm_rows" "$rs_rows" "${native_s[*]}" "${wasm_s[*]}" "${rs_s[*]}" "${native_rss[*]}" "${wasm_rss[*]}" "${rs_rss[*]}" <<'PY'
import sys
nr, wr, rr = (int(x) for x in sys.argv[1:4])
ns, ws, rs = ([float(x) for x in a.split()] for a in sys.argv[4:7])
nm, wm, rm = ([int(x) for x in a.split()] for a in sys.argv[7:10])
rows = {"hudi-edge native": (nr, min(ns), max(nm)), "hudi-edge wasm (Node)": (wr, min(ws), max(wm)), "hudi-rs (PyPI hudi 0.5.0)": (rr, min(rs), max(rm))}
print(f"{'reader':28} {'rows':>9} {'best s':>8} {'rows/s':>11} {'peak RSS MB':>12}")
for k, (r, s, m) in rows.items():
    print(f"{k:28} {r:>9} {s:>8.2f} {r / s:>11,.0f} {m:>12}")
base = rows["hudi-rs (PyPI hudi 0.5.0)"]
for k in ("hudi-edge native", "hudi-edge wasm (Node)"):
    r, s, _ = rows[k]
    print(f"ratio {k} / hudi-rs: {(r / s) / (base[0] / base[1]):.2f}x rows/s")
if len({nr, wr, rr}) != 1:
    print(f"NOTE: row counts differ: native {nr}, wasm {wr}, hudi-rs {rr}")
PY
