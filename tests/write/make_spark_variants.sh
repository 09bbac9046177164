#!/usr/bin/env bash
# Spark-written tables with writer options the shared fixtures do not cover (issue 15 item 4:
# bucket index, dropped partition columns, URL-encoded partition paths, CDC, column stats on
# logical types, schema evolution on read), zipped into tests/data/spark_variants/ with what PyPI `hudi` and Hudi Spark
# 1.1.1 read back (tests/write/hudi_rs_matrix_expected.py). Dev-only.
#
# Usage: tests/write/make_spark_variants.sh [TABLE...]     Needs: .ci/setup, tests/spark/setup.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
work=$(mktemp -d "${TMPDIR:-/tmp}/spark-variants.XXXXXX")
trap 'rm -rf "$work"' EXIT
# One JVM holds one Hudi bundle: the v9 tables, then the v6 one.
for hudi in 1.1.1 0.15.0; do
  tests/spark/run.sh tests/spark/make_variant_tables.py --hudi "$hudi" "$work" "$@" 2> "$work/write.log" ||
    { tail -30 "$work/write.log" >&2; exit 1; }
done
# Tables whose schema evolved on read (Spark SQL ALTER TABLE), unless other tables were named.
if [ $# -eq 0 ] || [[ " $* " == *" spark_v9_schema_on_read_"* ]]; then
  tests/spark/run.sh tests/spark/make_evolved_tables.py "$work" 2> "$work/write.log" ||
    { tail -30 "$work/write.log" >&2; exit 1; }
fi
names=$(ls "$work/tables")
out=tests/data/spark_variants
mkdir -p "$out"
for n in $names; do
  rm -f "$out/$n.zip"
  (cd "$work/tables" && zip -q -r -X "$repo/$out/$n.zip" "$n" -x '*.crc')
done
# shellcheck disable=SC2086
"$cache/venv/bin/python" tests/write/hudi_rs_matrix_expected.py hudi-rs "$work" $names
# shellcheck disable=SC2086
tests/spark/run.sh tests/write/hudi_rs_matrix_expected.py spark "$work" $names 2> "$work/spark.log" ||
  { tail -30 "$work/spark.log" >&2; exit 1; }
# shellcheck disable=SC2086
"$cache/venv/bin/python" tests/write/hudi_rs_matrix_expected.py merge "$work" "$out" $names
