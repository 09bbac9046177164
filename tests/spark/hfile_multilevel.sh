#!/usr/bin/env bash
# A record-index HFile with a multi-level block index, written by Apache Hudi 0.15.0 (HBase's
# HFile writer), and what Hudi's and HBase's own readers read from it — the fixture and expected
# values of src/hfile/hudi_multilevel_tests.rs. Dev-only (needs tests/spark/setup.sh); CI reads
# the committed files:
#   tests/data/hfile/hfile_multilevel_rli.zip   the HFile (one entry)
#   tests/data/hfile/hfile_multilevel_rli.json  levels (HBase), entries, scan digest, lookups (Hudi 1.1.1)
# Usage: tests/spark/hfile_multilevel.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
jar15="$cache/spark/jars/hudi-spark3.5-bundle_2.12-0.15.0.jar"
jar11="$cache/spark/jars/hudi-spark3.5-bundle_2.12-1.1.1.jar"
for j in "$jar15" "$jar11"; do [ -f "$j" ] || { echo "missing $j: run tests/spark/setup.sh" >&2; exit 1; }; done
spark_jars="$(ls "$cache"/spark/venv/lib/python3.*/site-packages/pyspark/jars/*.jar | tr '\n' ':')"
work=$(mktemp -d "${TMPDIR:-/tmp}/hfile-multilevel.XXXXXX")
trap 'rm -rf "$work"' EXIT
rows=60000
tests/spark/run.sh tests/spark/make_hfile_multilevel.py "$work" "$rows" >&2
hfile=$(ls "$work"/hfile_multilevel/.hoodie/metadata/record_index/*.hfile)
[ "$(echo "$hfile" | wc -l)" = 1 ] || { echo "expected one record-index HFile: $hfile" >&2; exit 1; }

mkdir -p "$work/c15" "$work/c11"
javac -d "$work/c15" -cp "$jar15:$spark_jars" tests/spark/hfile/HBaseHFileLevels.java
javac -d "$work/c11" -cp "$jar11:$spark_jars" tests/spark/hfile/HudiHFileRead.java
hbase=$(java -cp "$jar15:$spark_jars:$work/c15" HBaseHFileLevels "$hfile" 2>/dev/null)
levels=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["levels"])' "$hbase")
[ "$levels" -ge 2 ] || { echo "only $levels index level(s): $hbase" >&2; exit 1; }
# Present keys across the whole range (every 997th, both ends) and absent ones around them.
keys=$(python3 -c "
n=$rows
ks=sorted({0,1,n//2,n-2,n-1,*range(0,n,997)})
print(' '.join(['k%07d'%i for i in ks]+['k%07dx'%i for i in ks[:5]]+['a','k','k9999999','zzz']))")
# shellcheck disable=SC2086
hudi=$(java -cp "$jar11:$spark_jars:$work/c11" HudiHFileRead "$hfile" $keys 2>/dev/null)

out=tests/data/hfile
name=$(basename "$hfile")
(cd "$(dirname "$hfile")" && rm -f "$OLDPWD/$out/hfile_multilevel_rli.zip" && zip -qX "$OLDPWD/$out/hfile_multilevel_rli.zip" "$name")
python3 - "$out/hfile_multilevel_rli.json" "$name" "$hbase" "$hudi" <<'PY'
import json, sys
path, name, hbase, hudi = sys.argv[1:]
doc = {
    "file": name,
    "writer": "Apache Hudi 0.15.0 (Spark 3.5.5), tests/spark/make_hfile_multilevel.py: "
              "60000 rows, record index built on an existing table, "
              "hfile.index.block.max.size=256, hfile.index.block.min.entries=2",
    "hbase_reader": json.loads(hbase),
    "hudi_reader": json.loads(hudi),
}
with open(path, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
PY
echo "wrote $out/hfile_multilevel_rli.zip ($(stat -c %s "$out/hfile_multilevel_rli.zip") bytes) and .json: $hbase" >&2
