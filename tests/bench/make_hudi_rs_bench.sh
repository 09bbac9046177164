#!/usr/bin/env bash
# The bench table written by hudi-rs 0.6.0-rc.1 (for tests/bench/mdt_skipping.py): the rows of
# the Spark-written bench_cow_v9 appended by hudi-rs one source file group per commit, so it
# has the same 256 file groups with the same tight ranges, and a metadata table (files,
# column_stats, partition_stats, record_index) as hudi-rs keeps it. ~40 s to write; ~770 MB
# (hudi-rs has no cleaner: every metadata compaction's HFiles stay).
#
# Usage: tests/bench/make_hudi_rs_bench.sh   → $HUDI_EDGE_CACHE/tables/hudi_rs_bench_cow_v9
# Needs: tests/spark/make_bench_tables.py (the source table); installs protoc (Debian
# protobuf-compiler), which a cold hudi-rs build needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
.ci/apt-install protobuf-compiler
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
src="$cache/tables/bench_cow_v9"
dest="$cache/tables/hudi_rs_bench_cow_v9"
[ -d "$src/.hoodie" ] || { echo "missing $src: run tests/spark/make_bench_tables.py" >&2; exit 1; }
hrs_target="$cache/hudi-rs-bench-target"
(cd tests/bench/hudi_rs_upsert && CARGO_TARGET_DIR="$hrs_target" cargo build -q --release --bin matrix)
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo build -q --release --bin hudi-edge
bin="${CARGO_TARGET_DIR:-target}/release/hudi-edge"
input=$(mktemp "${TMPDIR:-/tmp}/hudi-rs-bench.XXXXXX.arrow")
trap 'rm -f "$input"' EXIT
"$bin" read "$src" --format arrow \
  --columns _hoodie_file_name,id,ts,event_ts,event_date,amount,qty,score,customer,category,is_flagged,region > "$input"
rm -rf "$dest"
"$hrs_target/release/matrix" --bench "$dest" "$input"
