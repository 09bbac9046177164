#!/usr/bin/env bash
# Run a python script of tests/spark with the venv made by setup.sh, e.g.
#   tests/spark/run.sh tests/spark/read_table.py /path/to/table
#   tests/spark/run.sh tests/spark/make_bench_tables.py
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
PY="$CACHE/spark/venv/bin/python"
[ -x "$PY" ] || bash "$HERE/setup.sh" >&2
export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
export TZ=UTC
exec "$PY" "$@"
