#!/usr/bin/env bash
# Expected log-file values from Apache Hudi's own classes (dev-only; needs tests/spark/setup.sh):
#  - tests/data/generated/hudi_log_blocks.json: every log file of every fixture table zip, as
#    Hudi 1.1.1's HoodieLogFormat reader sees it (block types, instants, record counts) — for
#    src/log_file/fixture_tests.rs.
#  - tests/data/generated/hudi_log_merge.json: the log files tests/log_merge.rs crafts (kept by
#    cargo in $CARGO_TARGET_DIR/tmp/log-merge/<test>), read by the same log reader, and each
#    crafted table's snapshot (uuid -> fare) as Hudi 0.15.0 Spark reads it (table version 6).
# Usage: tests/spark/hudi_log_expected.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
jar="$cache/spark/jars/hudi-spark3.5-bundle_2.12-1.1.1.jar"
[ -f "$jar" ] || { echo "missing $jar: run tests/spark/setup.sh" >&2; exit 1; }
cp="$jar:$(ls "$cache"/spark/venv/lib/python3.*/site-packages/pyspark/jars/*.jar | tr '\n' ':')"
work=$(mktemp -d "${TMPDIR:-/tmp}/hudi-log-expected.XXXXXX")
trap 'rm -rf "$work"' EXIT
javac -d "$work" -cp "$cp" tests/spark/logs/HudiLogBlocks.java
out=tests/data/generated
fixtures="${HUDI_FIXTURES:-$(readlink -f tests/data/fixtures/tables)}"
java -cp "$cp:$work" HudiLogBlocks zips "$fixtures" 2>"$work/zips.err" > "$out/hudi_log_blocks.json" ||
  { cat "$work/zips.err" >&2; exit 1; }

# The crafted tables: the tests write them before asserting, so a test that disagrees with the
# old expected file still leaves its table (hence `|| true`).
target="${CARGO_TARGET_DIR:-target}"
cargo test -q --test log_merge >&2 || true
dirs=$(ls -d "$target"/tmp/log-merge/*/)
# shellcheck disable=SC2086
java -cp "$cp:$work" HudiLogBlocks dirs $dirs 2>"$work/dirs.err" > "$work/blocks.json" ||
  { cat "$work/dirs.err" >&2; exit 1; }
# shellcheck disable=SC2086
tests/spark/run.sh tests/spark/read_fares.py $dirs 2>"$work/spark.err" > "$work/fares.json" ||
  { tail -20 "$work/spark.err" >&2; exit 1; }
python3 - "$work/blocks.json" "$work/fares.json" "$out/hudi_log_merge.json" <<'PY'
import json, sys
blocks, fares, path = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
doc = {t: {"log_blocks": blocks[t], **fares[t]} for t in sorted(blocks)}
with open(path, "w") as f:
    json.dump(doc, f, indent=1, sort_keys=True)
    f.write("\n")
PY
echo "wrote $out/hudi_log_blocks.json and $out/hudi_log_merge.json" >&2
