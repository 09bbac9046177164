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
tests/spark/run.sh tests/spark/make_cdc_tables.py "$work" "$@" 2> "$work/write.log" ||
  { tail -30 "$work/write.log" >&2; exit 1; }
out=tests/data/cdc
mkdir -p "$out"
for n in $(ls "$work/tables"); do
  rm -f "$out/$n.zip"
  (cd "$work/tables" && zip -q -r -X "$repo/$out/$n.zip" "$n" -x '*.crc')
  cp "$work/$n.json" "$out/$n.json"
done
