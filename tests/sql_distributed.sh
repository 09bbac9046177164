#!/usr/bin/env bash
# SQL on a Ballista cluster of this machine (feature `ballista`), outside .ci/test: Ballista's
# build is too long for CI's budget (tests/bench/results/sql_distributed.md). Builds the CLI and
# tests/sql_distributed.rs with the feature, starts a scheduler and two executors on loopback,
# and checks the distributed rows against one process's (and Spark's).
#   tests/sql_distributed.sh [cargo test arguments…]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --features datafusion,ballista --test sql_distributed "$@"
