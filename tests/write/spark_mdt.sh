#!/usr/bin/env bash
# The metadata table (MDT) hudi-edge builds, against Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh and the hudi-rs venv). tests/write/spark_mdt.py does the Spark side.
#   1. Tables `hudi-edge create` made (COW/MOR, partitioned or not, simple/complex keys, record
#      index on or off), after three hudi-edge writes (insert; upsert: 5 updates + 10 inserts;
#      delete): (a) `plan --json` plans from the MDT (record-key lookup to one slice with the
#      record index, `ts` ranges pruned by column/partition stats); (b) Spark reads with
#      hoodie.metadata.enable and data skipping (full and filtered) = hudi-edge = hudi-rs;
#      (c) Hudi's MDT classes and procedures and the MDT read as a table match the storage.
#   2. Spark upserts on top (metadata on, the table's record index), all readers agree and the
#      checks pass; then a hudi-edge upsert after Spark's, all agree again.
#   3. `hudi-edge index` on Spark tables: one written without an MDT (partitioned MOR with log
#      files) and one with `files` only; then Spark reads and checks (and upserts on the second).
#   4. (found while writing this) a table hudi-edge wrote without an MDT, whose MDT Spark then
#      builds from the parquet footers: parquet-rs marks double columns IEEE_754_TOTAL_ORDER,
#      which parquet-mr does not know.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_mdt.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_mdt.txt; ~25 min, one JVM at a time)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-mdt}
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS

# Filters as `col op value` clauses joined by " AND " (the record-key lookup names every key
# field, so that a complex key can be looked up in the record index).
set_filters() { # KEY_FIELDS
  edge_filters=("id = K03" "ts >= 1000" "ts < 50" "v >= 40")
  [ "$1" = "id,region" ] && edge_filters[0]="id = K03 AND region = eu"
  spark_filters=()
  local f
  for f in "${edge_filters[@]}"; do
    spark_filters+=(--filter "$(echo "$f" | sed -E "s/ = ([A-Za-z][A-Za-z0-9]*)/ = '\1'/g")")
  done
}
set_filters id
edge_args() { # SPEC -> --filter clause...
  local IFS=$'\n' c
  for c in $(echo "$1" | sed 's/ AND /\n/g'); do printf '%s\n' --filter "$c"; done
}

spark() { # TABLE PREFIX ACTION... : tests/write/spark_mdt.py with the filters
  tests/spark/run.sh tests/write/spark_mdt.py "$@" "${spark_filters[@]}" > "$2.out" 2> "$2.err" \
    || { echo "  SPARK RUN FAILED ($(basename "$2")): $(grep -v '^\s*at ' "$2.err" | grep -iE 'exception|error' | head -3)"; status=1; }
  grep -q "UPSERT FAILED" "$2.err" && { echo "  $(grep -m1 'UPSERT FAILED' "$2.err")"; status=1; }
  return 0
}

# The rows of our snapshot and filtered reads, and hudi-rs's snapshot, into PREFIX.*.
edge_reads() { # TABLE PREFIX
  ours "$1" > "$2.rows.jsonl" || { echo "  hudi-edge read FAILED"; status=1; }
  local i=0 f
  for f in "${edge_filters[@]}"; do
    mapfile -t fa < <(edge_args "$f")
    "$bin" read "$1" "${fa[@]}" --format oracle-jsonl > "$2.f$i.jsonl" || { echo "  hudi-edge read --filter '$f' FAILED"; status=1; }
    i=$((i + 1))
  done
  "$py" tests/write/hudi_rs_rows.py "$1" > "$2.hudi_rs.jsonl" 2> "$2.hudi_rs.err" || { echo "  hudi-rs read FAILED: $(tail -1 "$2.hudi_rs.err")"; status=1; }
}

# Spark's check N of run PREFIX against our reads EDGE (and hudi-rs), then its MDT checks.
compare() { # SPARK_PREFIX N EDGE_PREFIX
  local s="$1.check$2" e=$3 i=0 f
  if [ ! -s "$s.report.json" ]; then echo "  no Spark report $s"; status=1; return; fi
  same "Spark (MDT + data skipping) vs hudi-edge, snapshot" "$s.rows.jsonl" "$e.rows.jsonl"
  same "hudi-rs vs hudi-edge, snapshot" "$e.hudi_rs.jsonl" "$e.rows.jsonl"
  for f in "${edge_filters[@]}"; do
    "$py" - "$e.rows.jsonl" "$f" > "$e.f$i.expected.jsonl" <<'PY'
import json, sys
def match(r, clause):
    col, op, val = clause.split(" ", 2)
    v = r.get(col)
    x = type(v)(val) if isinstance(v, (int, float)) else val
    return v is not None and {"=": v == x, ">=": v >= x, "<": v < x}[op]
for line in open(sys.argv[1]):
    if all(match(json.loads(line), c) for c in sys.argv[2].split(" AND ")):
        print(line.rstrip())
PY
    local a b
    a=$(sorted_json "$s.f$i.jsonl" | md5sum); b=$(sorted_json "$e.f$i.jsonl" | md5sum)
    c=$(sorted_json "$e.f$i.expected.jsonl" | md5sum)
    if [ "$a" = "$c" ] && [ "$b" = "$c" ]; then
      echo "  filter '$f': Spark = hudi-edge = snapshot filtered ($(grep -c . "$e.f$i.expected.jsonl") rows; $("$py" -c '
import json, sys
f = json.load(open(sys.argv[1]))["filters"][int(sys.argv[2])]
print("Spark read %s files with data skipping, %s without" % (f.get("files_read_skipping_on"), f.get("files_read_skipping_off")))' "$s.report.json" "$i"))"
    else
      echo "  filter '$f': DIFFERENT: Spark $(grep -c . "$s.f$i.jsonl") rows, hudi-edge $(grep -c . "$e.f$i.jsonl"), snapshot filtered $(grep -c . "$e.f$i.expected.jsonl")"
      [ "$a" = "$c" ] || diff <(sorted_json "$e.f$i.expected.jsonl") <(sorted_json "$s.f$i.jsonl") | head -4 | sed 's/^/    spark: /'
      [ "$b" = "$c" ] || diff <(sorted_json "$e.f$i.expected.jsonl") <(sorted_json "$e.f$i.jsonl") | head -4 | sed 's/^/    edge: /'
      status=1
    fi
    i=$((i + 1))
  done
  mdt_summary "$s.report.json"
}


# (a) planning: every filter from the MDT, never leaving out a slice that holds a matching row
# (rows read with --no-data-skipping); the key lookup to one slice with a record index; with
# --expect-pruning (right after the three hudi-edge writes, whose data is laid out for it) the
# ts ranges pruned by the stats.
plan_checks() { # TABLE [--expect-pruning]
  local f
  "$bin" read "$1" --no-data-skipping --format jsonl > "$1.plan_rows.jsonl" 2>/dev/null
  for f in "${edge_filters[@]}"; do
    mapfile -t fa < <(edge_args "$f")
    "$bin" plan "$1" "${fa[@]}" --json > "$1.plan.json" 2> "$1.plan.err" || { echo "  plan '$f' FAILED: $(tail -1 "$1.plan.err")"; status=1; continue; }
    "$py" - "$1.plan.json" "$f" "$("$bin" info "$1" --json)" "$1.plan_rows.jsonl" "${2:-}" <<'PY' || status=1
import json, sys
plan = json.load(open(sys.argv[1]))
d = plan["stats"]
f = sys.argv[2]
info = json.loads(sys.argv[3])
ri = "record_index" in info["metadata_partitions"]
def match(r, clause):
    col, op, val = clause.split(" ", 2)
    v = r.get(col)
    x = type(v)(val) if isinstance(v, (int, float)) else val
    return v is not None and {"=": v == x, ">=": v >= x, "<": v < x}[op]
rows = [json.loads(l) for l in open(sys.argv[4]) if l.strip()]
need = {(r["_hoodie_partition_path"], r["_hoodie_file_name"].lstrip(".").split("_")[0])
        for r in rows if all(match(r, c) for c in f.split(" AND "))}
planned = {(s["partition"], s["file_id"]) for s in plan["file_slices"]}
left_out = need - planned
ok = d["planning_source"] == "metadata_table" and not left_out
want = "from the MDT, no slice with a matching row left out"
used_ri = any(n.startswith("record_index") for n in d["planning_notes"])
if f.startswith("id =") and ri and len(info["record_key_fields"]) > 1:
    # Complex key: one slice asked for; whether the record index served it is reported.
    ok = ok and d["slices_selected"] == 1
    want += f", one slice (complex key; record index used: {'yes' if used_ri else 'NO'})"
elif f.startswith("id =") and ri:
    ok = ok and d["slices_selected"] == 1 and used_ri
    want += ", one slice by the record index"
elif f.startswith("ts") and sys.argv[5] == "--expect-pruning":
    ok = ok and d["slices_selected"] < d["slices_total"] and any("stats" in n for n in d["planning_notes"])
    want += ", pruned by stats"
notes = "; ".join(n for n in d["planning_notes"] if not n.startswith("data files from"))
print(f"  plan '{f}': {d['planning_source']}, {d['slices_selected']} of {d['slices_total']} slices "
      f"({len(need)} hold matching rows{', LEFT OUT %s' % sorted(left_out) if left_out else ''}) [{notes}] -> {'ok' if ok else 'FAIL'} ({want})")
sys.exit(0 if ok else 1)
PY
  done
}

# Input rows (the same as spark_mdt.py's make-* writes).
mkdir -p "$out/data"
"$py" - "$out/data" <<'PY'
import json, sys
d = sys.argv[1]
regions = ["eu", "us", "ap"]
def w(name, rows):
    with open(f"{d}/{name}.jsonl", "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
w("w1", [{"id": f"K{i:02d}", "ts": i * 10, "region": regions[i // 10], "v": i * 1.5} for i in range(30)])
w("w2", [{"id": f"K{i:02d}", "ts": i * 10 + 5, "region": "eu", "v": -1.0} for i in range(5)]
   + [{"id": f"K{i:02d}", "ts": 1000 + i, "region": "sa", "v": i * 1.5} for i in range(30, 40)])
w("w3", [{"id": "K10", "ts": 999, "region": "us", "v": 0.0}, {"id": "K11", "ts": 999, "region": "us", "v": 0.0},
         {"id": "K35", "ts": 2000, "region": "sa", "v": 0.0}])
w("w4", [{"id": "K05", "ts": 10000, "region": "eu", "v": 555.0}, {"id": "K50", "ts": 10001, "region": "eu", "v": 50.5}])
PY
cols="id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE"

# Files hudi-edge rewrote under a Hadoop .crc that Spark's local file system wrote (Hadoop then
# refuses them: ChecksumException); with --fix the stale .crc files are removed.
stale_crc() { # TABLE WHAT [--fix]
  local s
  s=$("$py" tests/write/stale_crc.py "$1" ${3:-})
  if [ -n "$s" ]; then
    echo "  STALE Hadoop .crc after $2: $(echo $s)${3:+ (removed)}"; status=1
  fi
}

edge_write() { # TABLE INPUT [ARGS...]
  local t=$1 in=$2; shift 2
  if "$bin" write "$t" --input "$out/data/$in.jsonl" "$@" --json > "$t.$in.json" 2> "$t.$in.err"; then
    echo "  hudi-edge write $in ${*}: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["records"]; print(d["action"], {k: v for k, v in r.items() if v}, "MDT", ",".join(d["metadata_table"]["partitions"]))' "$t.$in.json")"
  else
    echo "  hudi-edge write $in FAILED: $(tail -2 "$t.$in.err")"; status=1
  fi
  stale_crc "$t" "hudi-edge write $in"
}

edge_index() { # TABLE PARTITIONS
  if "$bin" index "$1" --partitions "$2" --json > "$1.index.json" 2> "$1.index.err"; then
    echo "  hudi-edge index --partitions $2: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(", ".join("%s (instant %s, %d file groups, %d records)" % (p["partition"], p["instant"], p["file_groups"], p["records"]) for p in d["partitions"]))' "$1.index.json")"
  else
    echo "  hudi-edge index FAILED: $(tail -3 "$1.index.err")"; status=1
  fi
  echo "  hoodie.properties: hoodie.table.metadata.partitions=$(grep '^hoodie.table.metadata.partitions=' "$1/.hoodie/hoodie.properties" | cut -d= -f2)"
  stale_crc "$1" "hudi-edge index"
}

echo "# tests/write/spark_mdt.sh — hudi-edge's metadata table vs Apache Hudi Spark 1.1.1 ($(date -u +%F), CLI $("$bin" --version))"
echo "# filters: ${edge_filters[*]/#/|} (complex keys: id = K03 AND region = eu)"
echo "# HoodieMetadataTableValidator (hudi-utilities): not run — org.apache.hudi:hudi-utilities-slim-bundle_2.12:1.1.1 is not on"
echo "#   Maven Central here (mvn dependency:copy: 'Could not find artifact ... in central'); its checks are redone in"
echo "#   tests/write/spark_mdt.py with the Spark bundle's classes (HoodieBackedTableMetadata, file-system views,"
echo "#   ParquetUtils, readRecordIndexLocationsWithKeys) and procedures (show_metadata_table_*, validate_metadata_table_files)."
echo
echo "## 1-2. Tables hudi-edge created: 3 hudi-edge writes, Spark reads/checks, Spark upserts, hudi-edge upserts"
# name type partitioned keys record_index
while read -r name type part keys rli; do
  t="$out/$name"
  echo
  echo "### $name ($type, $([ "$part" = y ] && echo partitioned by region || echo non-partitioned), key $keys, record_index $rli)"
  args=(--type "$type" --columns "$cols" --record-key "$keys" --ordering ts)
  [ "$part" = y ] && args+=(--partition-by region)
  [ "$rli" = on ] && args+=(--option hoodie.metadata.record.index.enable=true)
  "$bin" create "$t" "${args[@]}" > /dev/null || { echo "  create FAILED"; status=1; continue; }
  echo "  created: MDT $("$bin" info "$t" --json | "$py" -c 'import json,sys; print(",".join(json.load(sys.stdin)["metadata_partitions"]))')"
  edge_write "$t" w1
  edge_write "$t" w2 --option hoodie.parquet.small.file.limit=0
  edge_write "$t" w3 --operation delete
  set_filters "$keys"
  echo " 1(a) hudi-edge plans after its 3 writes"
  plan_checks "$t" "$([ "$type" = mor ] && [ "$part" = n ] && echo || echo --expect-pruning)"
  edge_reads "$t" "$t.e1"
  echo " 1(b,c) Spark reads with the MDT, checks it; 2. Spark upserts, reads and checks again"
  spark "$t" "$t.s" check upsert check
  compare "$t.s" 1 "$t.e1"
  echo "  Spark upsert: $("$py" -c 'import json,sys; u=json.load(open(sys.argv[1]))["upserts"]; print([("ok, %d rows" % x["rows"]) if x["ok"] else "FAILED: " + x["error"] for x in u])' "$t.s.run.json" 2>/dev/null)"
  edge_reads "$t" "$t.e2"
  echo " 2. after Spark's upsert"
  compare "$t.s" 2 "$t.e2"
  plan_checks "$t"
  echo " 2. hudi-edge upsert after Spark's"
  edge_write "$t" w4
  edge_reads "$t" "$t.e3"
  spark "$t" "$t.s2" check
  compare "$t.s2" 1 "$t.e3"
  plan_checks "$t"
done <<'TABLES'
cow_part cow y id off
mor_part_rli mor y id on
cow_nonpart_rli cow n id on
mor_nonpart_complex mor n id,region off
mor_part_complex_rli mor y id,region on
TABLES

echo
set_filters id
echo "## 3. hudi-edge index on Spark-written tables"
t="$out/spark_mor_nomdt"
echo
echo "### spark_mor_nomdt (Spark 1.1.1, MOR partitioned, hoodie.metadata.enable=false; insert, upsert, delete)"
spark "$t" "$t.s0" make-nomdt
echo "  Spark wrote: $(ls "$t"/*/ -a 2>/dev/null | grep -c '\.log\.') log files, $(find "$t" -name '*.parquet' -not -path '*/.hoodie/*' | wc -l) base files; MDT on disk: $([ -d "$t/.hoodie/metadata" ] && echo yes || echo none); hoodie.table.metadata.partitions=$(grep '^hoodie.table.metadata.partitions=' "$t/.hoodie/hoodie.properties" | cut -d= -f2)"
edge_index "$t" files,column_stats,record_index
plan_checks "$t" --expect-pruning
edge_reads "$t" "$t.e1"
echo "  Spark reads the table as hudi-edge left it:"
spark "$t" "$t.s" check
compare "$t.s" 1 "$t.e1"
echo "  Spark again, with the stale .crc removed (a workaround, to check the MDT itself):"
stale_crc "$t" "hudi-edge index" --fix
spark "$t" "$t.sfix" check
compare "$t.sfix" 1 "$t.e1"

t="$out/spark_cow_filesonly"
echo
echo "### spark_cow_filesonly (Spark 1.1.1, COW partitioned, MDT with files only; insert, upsert, delete)"
spark "$t" "$t.s0" make-filesonly check
echo "  Spark wrote: hoodie.table.metadata.partitions=$(grep '^hoodie.table.metadata.partitions=' "$t/.hoodie/hoodie.properties" | cut -d= -f2)"
edge_reads "$t" "$t.e0"
echo "  reference: the checks on Spark's own files-only MDT"
compare "$t.s0" 1 "$t.e0"
edge_index "$t" record_index,column_stats
plan_checks "$t" --expect-pruning
edge_reads "$t" "$t.e1"
echo "  Spark reads the table as hudi-edge left it:"
spark "$t" "$t.s" check
compare "$t.s" 1 "$t.e1"
echo "  Spark again, with the stale .crc removed (a workaround, to check the MDT itself), then upserts:"
stale_crc "$t" "hudi-edge index" --fix
spark "$t" "$t.sfix" check upsert check
compare "$t.sfix" 1 "$t.e1"
echo "  Spark upsert: $("$py" -c 'import json,sys; u=json.load(open(sys.argv[1]))["upserts"]; print([("ok, %d rows" % x["rows"]) if x["ok"] else "FAILED: " + x["error"] for x in u])' "$t.sfix.run.json" 2>/dev/null)"
edge_reads "$t" "$t.e2"
echo "  after Spark's upsert"
compare "$t.sfix" 2 "$t.e2"
plan_checks "$t"

echo
echo "## 4. A table hudi-edge wrote without an MDT; Spark builds the MDT from the files' footers"
t="$out/edge_nomdt_spark_builds"
echo
echo "### edge_nomdt_spark_builds (hudi-edge COW partitioned, hoodie.metadata.enable=false, 3 writes; Spark upsert builds files,column_stats,partition_stats)"
"$bin" create "$t" --type cow --columns "$cols" --record-key id --partition-by region --ordering ts \
  --option hoodie.metadata.enable=false > /dev/null || { echo "  create FAILED"; status=1; }
echo "  created: MDT partitions '$("$bin" info "$t" --json | "$py" -c 'import json,sys; print(",".join(json.load(sys.stdin)["metadata_partitions"]))')'"
edge_write "$t" w1
edge_write "$t" w2 --option hoodie.parquet.small.file.limit=0
edge_write "$t" w3 --operation delete
spark "$t" "$t.s" upsert-build-mdt check
edge_reads "$t" "$t.e1"
compare "$t.s" 1 "$t.e1"

echo
echo "# $(( (SECONDS - start) / 60 )) min; overall: $([ $status = 0 ] && echo PASS || echo 'FAIL (see DIFFERENT / FAIL / PROBLEM lines)')"
exit $status
