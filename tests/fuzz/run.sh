#!/usr/bin/env bash
# Runs every fuzz target of tests/fuzz.rs for SECONDS_PER_TARGET (default 60) and prints
# executions and findings per target. Stable Rust only; a debug build keeps overflow checks.
#   tests/fuzz/run.sh [SECONDS_PER_TARGET]
# Environment: HUDI_EDGE_FUZZ_TARGETS=hfile,log_avro (a subset), HUDI_EDGE_FUZZ_SEED=N
# (another sequence), HUDI_EDGE_FUZZ_VERBOSE=1 (the commonest typed errors per target).
# Findings are saved under $CARGO_TARGET_DIR/tmp/fuzz/long/<target>/finding-N.bin; the
# input being parsed when the process aborted or hung is <target>/current.
set -euo pipefail
cd "$(dirname "$0")/../.."
export HUDI_EDGE_FUZZ_SECONDS="${1:-60}"
exec cargo test --test fuzz -- --ignored --exact fuzz_for_seconds --nocapture
