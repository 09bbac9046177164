#!/usr/bin/env bash
# Spark-written change-data-capture tables (every supplemental logging mode, COW and MOR) with
# the change feed Hudi Spark 1.1.1 reads back for each commit and the whole range, zipped into
# tests/data/cdc/ (tests/cdc.rs). Dev-only.
#
# Usage: tests/write/make_cdc_tables.sh [TABLE...]     Needs: .ci/setup, tests/spark/setup.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/cdc-tables.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() { tests/spark/run.sh tests/spark/make_cdc_tables.py "$@" 2>> "$work/write.log" > /dev/null ||
  { tail -30 "$work/write.log" >&2; exit 1; }; }
run "$work" "$@"
# Table version 6: Hudi 0.15.0 writes; Hudi 1.1.1 reads the COW feed, 0.15.0 the MOR one (1.1.1
# fails on version-6 delta commits).
if [ $# -eq 0 ]; then
  run --hudi 0.15.0 "$work"
  run --read-only "$work" cdc_v6_cow_data_before_after
  run --read-only --hudi 0.15.0 "$work" cdc_v6_mor_data_before_after
fi
out=tests/data/cdc
mkdir -p "$out"
for n in $(ls "$work/tables"); do
  rm -f "$out/$n.zip"
  (cd "$work/tables" && zip -q -r -X "$repo/$out/$n.zip" "$n" -x '*.crc')
  cp "$work/$n.json" "$out/$n.json"
done
