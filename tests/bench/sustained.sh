#!/usr/bin/env bash
# Sustained ingest (release CLI, local files): COMMITS commits of 100 rows (50 updates spread
# over the table + 50 inserts) into a 100k-row Merge-On-Read and a Copy-On-Write table, both
# with a metadata table and record index, with the table services this engine runs after
# writes. Prints one JSON line per checkpoint and a table with the ratio of the last
# checkpoint to the first (tests/bench/sustained.py says what is measured).
# Usage: tests/bench/sustained.sh [COMMITS] [CHECKPOINTS] [-- --option KEY=VALUE ...]
#        (results: tests/bench/results/sustained.md; ~30 min for 1,000 commits)
set -euo pipefail
cd "$(dirname "$0")/../.."
commits=${1:-1000}
checkpoints=${2:-50,250,500,1000}
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
bin=${HUDI_EDGE_BIN:-target/release/hudi-edge}
[ -n "${HUDI_EDGE_BIN:-}" ] || cargo build -q --release --bin hudi-edge
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) $commits commits; $(nproc) cores"
for type in mor cow; do
  python3 tests/bench/sustained.py "$bin" "$work" --type "$type" --commits "$commits" \
    --checkpoints "$checkpoints" "$@"
done
