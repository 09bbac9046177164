#!/usr/bin/env bash
# Idempotent setup of a local Apache Hudi Spark environment (no internet except package registries).
#  - Python venv with pyspark 3.5.x from PyPI
#  - Hudi Spark bundles from Maven Central via `mvn dependency:copy`
# Everything goes under ${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/spark (nothing in the repo).
set -euo pipefail

CACHE="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
SPARK_DIR="$CACHE/spark"
VENV="$SPARK_DIR/venv"
JARS="$SPARK_DIR/jars"
PYSPARK_VERSION="${PYSPARK_VERSION:-3.5.5}"
# Hudi versions: 1.1.1 -> table version 9, 0.15.0 -> table version 6.
# (1.1.0 is refused by Maven Central here: "not found"; 1.1.2 does not exist.)
HUDI_VERSIONS="${HUDI_VERSIONS:-1.1.1 0.15.0}"

mkdir -p "$SPARK_DIR" "$JARS" "$CACHE/tables"

command -v java >/dev/null || { echo "java not found (need JDK 17)" >&2; exit 1; }
command -v mvn  >/dev/null || { echo "mvn not found (need Maven 3.8+)" >&2; exit 1; }

# ---- venv + pyspark ---------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import pyspark,sys; sys.exit(0 if pyspark.__version__=='$PYSPARK_VERSION' else 1)" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet "pyspark==$PYSPARK_VERSION"
fi
# pyarrow: tests/bench/spark_upsert.py hands Spark the benchmark's Arrow rows.
if ! "$VENV/bin/python" -c "import pyarrow" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet pyarrow
fi

# ---- Hudi bundles -----------------------------------------------------------
for v in $HUDI_VERSIONS; do
  jar="$JARS/hudi-spark3.5-bundle_2.12-$v.jar"
  if [ -s "$jar" ]; then continue; fi
  echo "fetching org.apache.hudi:hudi-spark3.5-bundle_2.12:$v ..."
  if ! mvn -B -q dependency:copy \
        -Dartifact="org.apache.hudi:hudi-spark3.5-bundle_2.12:$v" \
        -DoutputDirectory="$JARS" -Dmdep.overWriteIfNewer=true >"$SPARK_DIR/mvn-$v.log" 2>&1; then
    echo "WARNING: Maven could not serve hudi-spark3.5-bundle_2.12:$v (see $SPARK_DIR/mvn-$v.log)" >&2
    grep -m3 ERROR "$SPARK_DIR/mvn-$v.log" >&2 || true
  fi
done

echo "HUDI_EDGE_CACHE = $CACHE"
echo "venv python     = $VENV/bin/python ($("$VENV/bin/python" -c 'import pyspark; print("pyspark", pyspark.__version__)'))"
echo "jars:"
ls -1 "$JARS"/*.jar 2>/dev/null | sed 's/^/  /'
echo "tables dir      = $CACHE/tables"
