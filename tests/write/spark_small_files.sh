#!/usr/bin/env bash
# New keys hudi-edge puts into small file groups, against Apache Hudi Spark 1.1.1 (dev-only;
# needs tests/spark/setup.sh and the hudi-rs venv). For Merge-On-Read tables created by the
# CLI without and with the record index, and a Copy-On-Write one:
#   1. 12 hudi-edge upserts of 2 updates + 3 new keys: one file group per partition (base
#      files rewritten, or new keys appended to logs under the record index);
#   2. Spark's snapshot and hudi-rs's equal ours; Spark upserts (its index finds every key:
#      none is written twice) and we read what it wrote;
#   3. three more hudi-edge upserts after Spark's; Spark reads them; no key twice.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_small_files.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_small_files.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-small-files}
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS

edge_upsert() { # TABLE N
  local t=$1 n=$2 f="$1.in.jsonl"
  : > "$f"
  for id in $((n * 3)) $((n * 3 + 1)) $((n * 3 + 2)) $((n > 0 ? n - 1 : 0)) $(( (n * 7) % (n * 3 + 1) )); do
    echo "{\"id\":$id,\"ts\":$((100 + n)),\"region\":\"$([ $((id % 2)) = 0 ] && echo eu || echo us)\",\"note\":\"edge-$n\"}" >> "$f"
  done
  "$bin" write "$t" --input "$f" > /dev/null || { echo "  write $n FAILED"; status=1; }
}

groups() { # TABLE
  "$bin" file-groups "$1" --json | "$py" -c '
import json, sys
g = json.load(sys.stdin)["groups"]
latest = [x["slices"][-1] for x in g]
print("  %d file groups; latest slices with log files: %d" % (len(g), sum(1 for s in latest if s.get("log_files"))))'
}

for spec in "mor:false" "mor:true" "cow:false"; do
  type=${spec%%:*} ri=${spec#*:}
  t="$out/${type}_ri_$ri"
  echo "$type, record index $ri"
  "$bin" create "$t" --columns 'id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING' \
    --record-key id --partition-by region --ordering ts --type "$type" \
    --option hoodie.metadata.record.index.enable=$ri > /dev/null
  for n in $(seq 0 11); do edge_upsert "$t" "$n"; done
  echo "  hudi-edge: 12 upserts (2 updates, 3 new keys each)"
  groups "$t"
  spark_step "$t" 1 --read-only
  hudi_rs_same "$t"
  spark_step "$t" 2 --new-key-per-run
  no_key_twice "$t.spark2.jsonl" "$t"
  for n in 12 13 14; do edge_upsert "$t" "$n"; done
  echo "  hudi-edge: three upserts after Spark's"
  groups "$t"
  spark_step "$t" 3 --read-only
  no_key_twice "$t.spark3.jsonl" "$t"
  hudi_rs_same "$t"
done
echo "overall: $([ $status = 0 ] && echo PASS || echo FAIL) in $((SECONDS - start)) s"
exit $status
