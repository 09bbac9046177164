#!/usr/bin/env bash
# The hudi-rs writer matrix (issue 15): tables written by hudi-rs 0.6.0-rc.1's writer
# (tests/bench/hudi_rs_upsert/src/bin/matrix.rs), zipped into tests/data/hudi_rs/ with the
# expected results of two independent readers, PyPI `hudi` (hudi-rs) and Apache Hudi Spark
# 1.1.1 (tests/write/hudi_rs_matrix_expected.py). Dev-only: CI reads the committed zips.
#
# Usage: tests/write/make_hudi_rs_matrix.sh [TABLE...]
# Needs: .ci/setup (the venv), tests/spark/setup.sh, protoc (Debian protobuf-compiler) for a
# cold hudi-rs build (12-45 min; the target dir is kept in the cache).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
hrs_target="$cache/hudi-rs-bench-target"
(cd tests/bench/hudi_rs_upsert && CARGO_TARGET_DIR="$hrs_target" cargo build -q --release --bin matrix)
work=$(mktemp -d "${TMPDIR:-/tmp}/hudi-rs-matrix.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
  "$hrs_target/release/matrix" "$work/tables" > "$work/steps.jsonl"
else
  for t in "$@"; do "$hrs_target/release/matrix" "$work/tables" "$t" >> "$work/steps.jsonl"; done
fi
names=$(ls "$work/tables")
out=tests/data/hudi_rs
mkdir -p "$out"
for n in $names; do
  rm -f "$out/$n.zip"
  (cd "$work/tables" && zip -q -r -X "$repo/$out/$n.zip" "$n")
done
# shellcheck disable=SC2086
"$cache/venv/bin/python" tests/write/hudi_rs_matrix_expected.py hudi-rs "$work" $names
# shellcheck disable=SC2086
tests/spark/run.sh tests/write/hudi_rs_matrix_expected.py spark "$work" $names 2> "$work/spark.log" ||
  { tail -30 "$work/spark.log" >&2; exit 1; }
# shellcheck disable=SC2086
"$cache/venv/bin/python" tests/write/hudi_rs_matrix_expected.py merge "$work" "$out" $names
