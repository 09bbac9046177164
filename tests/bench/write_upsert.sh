#!/usr/bin/env bash
# A 100-row upsert (50 updates of existing keys, 50 new keys) into the Spark-written 1M-row
# bench tables (metadata table with files, column_stats, partition_stats, record_index), on
# fresh copies, side by side in one run:
#   hudi-edge native (release CLI) on local files; the same with 20 ms added per request;
#   hudi-rs' writer (crate `hudi` 0.6.0-rc.1, tests/bench/hudi_rs_upsert); Apache Hudi Spark
#   1.1.1 (write time inside a warm JVM, and the JVM start apart).
# Prints wall time, peak RSS, and for hudi-edge requests, bytes and dependent round trips;
# then both engines against moto's S3 on loopback, where the server's access log counts every
# request each engine made. Each result is checked: the snapshot has 50 more rows.
#
# Usage: tests/bench/write_upsert.sh [cow|mor|both]
# Needs: .ci/setup, tests/spark/setup.sh, tests/spark/make_bench_tables.py (the tables),
# protoc for the hudi-rs build (Debian protobuf-compiler).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
which="${1:-both}"
py="$cache/venv/bin/python"
bin=target/release/hudi-edge
cargo build -q --release --bin hudi-edge
hrs_target="$cache/hudi-rs-bench-target"
(cd tests/bench/hudi_rs_upsert && CARGO_TARGET_DIR="$hrs_target" cargo build -q --release)
hrs="$hrs_target/release/hudi-rs-upsert"
work=$(mktemp -d "${TMPDIR:-/tmp}/write-upsert.XXXXXX")
moto_pid=
cleanup() { [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

count() { "$bin" read "$1" --columns id 2>/dev/null | wc -l; }

timed() { # label, command...: prints "label seconds peak_mb"
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out.json" 2> "$work/err" || {
    cat "$work/err" >&2; return 1; }
  read -r s kb < "$work/time"
  echo "$label $s $((kb / 1024))"
}

make_input() { # table → $work/upsert.arrow (50 existing ids with ts+1, 50 new ids)
  local ids
  ids=$(seq 7 19991 999999 | head -50 | paste -sd, -)
  "$bin" read "$1" --filter "id in ($ids)" --format arrow > "$work/existing.arrow"
  "$py" - "$work/existing.arrow" "$work/upsert.arrow" <<'PY'
import sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.ipc as ipc
t = ipc.open_stream(open(sys.argv[1], "rb")).read_all()
t = t.select([c for c in t.column_names if not c.startswith("_hoodie_")])
assert t.num_rows == 50, t.num_rows
upd = t.set_column(t.column_names.index("ts"), "ts", pc.add(t["ts"], 1))
upd = upd.set_column(upd.column_names.index("customer"), "customer", pa.array(["bench-update"] * 50))
new = t.set_column(t.column_names.index("id"), "id", pa.array(range(2_000_000, 2_000_050), pa.int64()))
both = pa.concat_tables([upd, new]).combine_chunks()
with open(sys.argv[2], "wb") as f, ipc.new_stream(f, both.schema) as w:
    w.write_table(both)
PY
}

field() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2:]]; print(d)' "$@"; }

run_table() {
  local kind=$1
  local src="$cache/tables/bench_${kind}_v9"
  [ -d "$src/.hoodie" ] || { echo "missing $src: run tests/spark/make_bench_tables.py" >&2; exit 1; }
  echo "== bench_${kind}_v9: $(count "$src") rows"
  make_input "$src"
  local before
  before=$(count "$src")
  printf "%-24s %8s %8s %9s %12s %12s\n" engine seconds peak_mb requests bytes round_trips
  for variant in local latency20; do
    rm -rf "$work/t" && cp -a "$src" "$work/t"
    local extra=()
    [ "$variant" = latency20 ] && extra=(--latency-ms 20)
    read -r _ s mb < <(timed x "$bin" "${extra[@]}" write "$work/t" --input "$work/upsert.arrow" --input-format arrow --json)
    printf "%-24s %8s %8s %9s %12s %12s\n" "hudi-edge $variant" "$s" "$mb" \
      "$(field "$work/out.json" io requests)" "$(field "$work/out.json" io bytes)" "$(field "$work/out.json" io round_trips)"
    [ "$(count "$work/t")" = "$((before + 50))" ] || { echo "hudi-edge: wrong row count" >&2; exit 1; }
  done
  rm -rf "$work/t" && cp -a "$src" "$work/t"
  read -r _ s mb < <(timed x "$hrs" "$work/t" "$work/upsert.arrow")
  local rows_hrs
  rows_hrs=$(count "$work/t")
  printf "%-24s %8s %8s %9s %12s %12s   rows after: %s (expected %s)\n" "hudi-rs 0.6.0-rc.1" "$s" "$mb" - - - \
    "$rows_hrs" "$((before + 50))"
  rm -rf "$work/t" && cp -a "$src" "$work/t"
  read -r _ s mb < <(timed x tests/spark/run.sh tests/bench/spark_upsert.py "$work/t" "$work/upsert.arrow")
  printf "%-24s %8s %8s %9s %12s %12s   (upsert %ss in a warm JVM; JVM + session start %ss)\n" \
    "Spark 1.1.1 (process)" "$s" "$mb" - - - "$(field "$work/out.json" seconds)" "$(field "$work/out.json" jvm_start_seconds)"
  [ "$(count "$work/t")" = "$((before + 50))" ] || { echo "Spark: wrong row count" >&2; exit 1; }

  # Requests against S3 (moto on loopback): the server's access log counts them.
  local port=$((20000 + RANDOM % 20000))
  "$cache/venv/bin/moto_server" -p "$port" > "$work/moto.log" 2>&1 &
  moto_pid=$!
  sleep 2
  export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
  for engine in hudi-edge hudi-rs; do
    "$py" - "$port" "$src" "$engine" <<'PY'
import os, sys, boto3
port, src, engine = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
bucket = engine.replace("_", "-")
s3.create_bucket(Bucket=bucket)
for root, _, files in os.walk(src):
    for f in files:
        p = os.path.join(root, f)
        s3.upload_file(p, bucket, "t/" + os.path.relpath(p, src))
PY
    local start
    start=$(wc -l < "$work/moto.log")
    if [ "$engine" = hudi-edge ]; then
      "$bin" --endpoint "http://127.0.0.1:$port" --path-style write "s3://hudi-edge/t" \
        --input "$work/upsert.arrow" --input-format arrow --json > "$work/s3.json"
    else
      AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true "$hrs" "s3://hudi-rs/t" "$work/upsert.arrow" > /dev/null
    fi
    local reqs
    reqs=$(tail -n +"$((start + 1))" "$work/moto.log" | grep -c '" [0-9][0-9][0-9] ' || true)
    printf "%-24s requests seen by S3: %s\n" "$engine over S3" "$reqs"
  done
  kill "$moto_pid"; moto_pid=
}

case "$which" in
  cow|mor) run_table "$which" ;;
  *) run_table cow; run_table mor ;;
esac
