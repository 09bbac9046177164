#!/usr/bin/env bash
# Secondary indexes hudi-edge keeps, against Apache Hudi Spark 1.1.1 (dev-only; needs
# tests/spark/setup.sh). tests/write/spark_secondary_index.py does the Spark side.
# For copies of the Spark fixtures with `CREATE INDEX` indexes (merchant_name, txn_date):
#   0. Spark (metadata table, record and secondary index, data skipping on) and hudi-edge agree
#      on the filters before any write: the baseline.
#   1. hudi-edge upserts (a changed merchant and date, a key moving to a null merchant, a new
#      key) and deletes; Spark's filtered reads = hudi-edge's; the secondary-index entries as
#      Spark reads the metadata table = the entries the snapshot's rows call for; hudi-edge
#      plans those filters through the secondary index.
#   2. Spark upserts after us (its writer keeps the indexes); all agree again.
#   3. hudi-edge upserts after Spark; all agree again.
#   4. `hudi-edge index --secondary account_id` on a fresh copy: Spark's SHOW INDEXES lists it,
#      its filtered reads and its reading of the entries agree with ours, it upserts after us.
# Usage: HUDI_EDGE_BIN=path/to/hudi-edge tests/write/spark_secondary_index.sh [OUT_DIR]
#        (results: tests/bench/results/write_spark_secondary_index.txt; one JVM at a time)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/tmp/write-spark-secondary-index}
source tests/write/spark_lib.sh
out=$(cd "$out" && pwd)
start=$SECONDS
fixtures=${HUDI_FIXTURES:-/work/shared/fixtures/tables/sample_table}

filters=(
  "merchant_name = 'Amazon Fresh'"
  "merchant_name = 'Uber'"
  "merchant_name = 'Spark Merchant'"
  "merchant_name in ('Spotify', 'Netflix', 'Apple Store')"
  "txn_date = '2024-01-15'"
  "txn_date in ('2024-02-01', '2024-01-21')"
)
spark_filters=()
for f in "${filters[@]}"; do spark_filters+=(--filter "$f"); done

spark() { # TABLE PREFIX ACTION...
  flock /tmp/spark.lock tests/spark/run.sh tests/write/spark_secondary_index.py "$@" "${spark_filters[@]}" \
    > "$2.out" 2> "$2.err" \
    || { echo "  SPARK RUN FAILED ($(basename "$2")): $(grep -E 'FAILED|Exception' "$2.err" | head -3)"; status=1; }
}

edge_reads() { # TABLE PREFIX
  ours "$1" > "$2.rows.jsonl" || { echo "  hudi-edge read FAILED"; status=1; }
  local i=0 f
  for f in "${filters[@]}"; do
    "$bin" read "$1" --filter "$f" --format oracle-jsonl > "$2.f$i.jsonl" || { echo "  hudi-edge read --filter \"$f\" FAILED"; status=1; }
    i=$((i + 1))
  done
}

# Spark's query run SPARK (N-th) against our reads EDGE.
compare() { # SPARK_PREFIX N EDGE_PREFIX
  local s="$1.query$2" e=$3 i=0 f
  [ -s "$s.report.json" ] || { echo "  no Spark report $s"; status=1; return; }
  same "Spark vs hudi-edge, snapshot" "$s.rows.jsonl" "$e.rows.jsonl"
  for f in "${filters[@]}"; do
    if diff -q <(sorted_json "$s.f$i.jsonl") <(sorted_json "$e.f$i.jsonl") > /dev/null; then
      echo "  \"$f\": Spark = hudi-edge ($(grep -c . "$e.f$i.jsonl") rows; $("$py" -c '
import json, sys
f = json.load(open(sys.argv[1]))["filters"][int(sys.argv[2])]
print("Spark read %s files with its indexes, %s without" % (f["files_read_skipping_on"], f["files_read_skipping_off"]))' "$s.report.json" "$i"))"
    else
      echo "  \"$f\": DIFFERENT: Spark $(grep -c . "$s.f$i.jsonl") rows, hudi-edge $(grep -c . "$e.f$i.jsonl")"
      diff <(sorted_json "$s.f$i.jsonl") <(sorted_json "$e.f$i.jsonl") | head -4 | sed 's/^/    /'
      status=1
    fi
    i=$((i + 1))
  done
}

# The entries Spark reads from the metadata table = those our snapshot's rows call for.
entries_check() { # SPARK_PREFIX N EDGE_PREFIX
  "$py" - "$1.entries$2.json" "$3.rows.jsonl" <<'PY' || status=1
import datetime, json, sys
got = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def esc(v):
    if v is None:
        return "\0"
    return "".join("\\" + c if c in "\\$\0" else c for c in v)
def text(col, v):
    if v is None or col != "txn_date":
        return v
    return str((datetime.date.fromisoformat(v) - datetime.date(1970, 1, 1)).days)
ok = True
for part in sorted(got):
    col = {"secondary_index_merchant_idx": "merchant_name", "secondary_index_txn_date_idx": "txn_date",
           "secondary_index_account_id_idx": "account_id"}[part]
    want = {esc(text(col, r.get(col))) + "$" + esc(r["_hoodie_record_key"]) for r in rows}
    have = set(got.get(part, []))
    same = want == have
    ok &= same
    print(f"  {part} as Spark reads the metadata table: {len(have)} live entries, "
          + ("= the snapshot's rows" if same else f"DIFFERENT: missing {sorted(want - have)[:4]}, stale {sorted(have - want)[:4]}"))
sys.exit(0 if ok else 1)
PY
}

plan_checks() { # TABLE
  local f
  for f in "${filters[@]}"; do
    "$bin" plan "$1" --filter "$f" --json > "$1.plan.json" 2> "$1.plan.err" || { echo "  plan \"$f\" FAILED: $(tail -1 "$1.plan.err")"; status=1; continue; }
    "$py" - "$1.plan.json" "$f" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))["stats"]
notes = [n for n in d["planning_notes"] if n.startswith("secondary_index")]
ok = d.get("files_after_secondary_index") is not None and bool(notes)
print(f"  plan \"{sys.argv[2]}\": {d['slices_selected']} of {d['slices_total']} slices, "
      f"files_after_secondary_index {d.get('files_after_secondary_index')} [{'; '.join(notes)}] -> {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
  done
}

edge_write() { # TABLE NAME ARGS... (input: $out/NAME.jsonl)
  local t=$1 in=$2; shift 2
  if "$bin" write "$t" --input "$out/$in.jsonl" "$@" --json > "$t.$in.json" 2> "$t.$in.err"; then
    echo "  hudi-edge write $in ${*}: $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["records"]; print(d["action"], {k: v for k, v in r.items() if v}, "MDT", ",".join(d["metadata_table"]["partitions"]))' "$t.$in.json")"
  else
    echo "  hudi-edge write $in FAILED: $(tail -2 "$t.$in.err")"; status=1
  fi
}

# Inputs from the table's rows: WHICH = first (upsert + delete) or after_spark.
make_inputs() { # TABLE WHICH
  "$bin" read "$1" --format jsonl > "$out/current.jsonl"
  "$py" - "$out/current.jsonl" "$out" "$2" <<'PY'
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1]) if l.strip()), key=lambda r: r["txn_id"])
rows = [{k: v for k, v in r.items() if not k.startswith("_hoodie_")} for r in rows if r["txn_id"].startswith("TXN-0")]
out, which = sys.argv[2], sys.argv[3]
def w(name, rs):
    with open(f"{out}/{name}.jsonl", "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rs))
def bump(r, by=1_000_000):
    return {**r, "txn_ts": r["txn_ts"] + by}
if which == "first":
    a, b, c, d = rows[0], rows[1], rows[2], rows[3]
    w("upsert", [bump({**a, "merchant_name": "Amazon Fresh", "txn_date": "2024-02-01"}),
                 bump({**b, "merchant_name": None}),
                 bump({**c, "txn_id": "TXN-900", "merchant_name": "Uber"})])
    w("delete", [d, rows[4]])
else:
    r = rows[5]
    w("upsert2", [bump({**r, "merchant_name": "Uber", "txn_date": "2024-01-21"}, 9_000_000_000)])
PY
}

echo "# tests/write/spark_secondary_index.sh — secondary indexes hudi-edge keeps vs Apache Hudi Spark 1.1.1 ($(date -u +%F), CLI $("$bin" --version))"
echo "# Spark reads: hoodie.metadata.enable, hoodie.metadata.record.index.enable, hoodie.metadata.index.secondary.enable, hoodie.enable.data.skipping = true"
for fx in cow/v9_txns_simple_meta mor/avro/v9_txns_simple_meta cow/v9_txns_nonpart_meta; do
  name=$(echo "$fx" | tr / _)
  t="$out/$name"
  echo
  echo "### $fx (copy of the Spark fixture; hoodie.table.metadata.partitions=$(unzip -p "$fixtures/$fx.zip" "$(basename "$fx")/.hoodie/hoodie.properties" | grep '^hoodie.table.metadata.partitions=' | cut -d= -f2))"
  mkdir -p "$out/unzip.$name" && unzip -q -o "$fixtures/$fx.zip" -d "$out/unzip.$name" && mv "$out/unzip.$name/$(basename "$fx")" "$t"
  echo " 0. before any write"
  spark "$t" "$t.s0" query
  edge_reads "$t" "$t.e0"
  compare "$t.s0" 1 "$t.e0"
  echo " 1. hudi-edge upsert and delete"
  make_inputs "$t" first
  edge_write "$t" upsert
  edge_write "$t" delete --operation delete
  edge_reads "$t" "$t.e1"
  spark "$t" "$t.s1" query entries upsert query entries
  compare "$t.s1" 1 "$t.e1"
  entries_check "$t.s1" 1 "$t.e1"
  plan_checks "$t"
  echo " 2. after Spark's upsert ($("$py" -c 'import json,sys; print("keys", json.load(open(sys.argv[1]))["keys"][:2], "to Spark Merchant, a new key")' "$t.s1.upsert.json" 2>/dev/null || echo FAILED))"
  edge_reads "$t" "$t.e2"
  compare "$t.s1" 2 "$t.e2"
  entries_check "$t.s1" 2 "$t.e2"
  echo " 3. hudi-edge upsert after Spark's"
  make_inputs "$t" after_spark
  edge_write "$t" upsert2
  edge_reads "$t" "$t.e3"
  spark "$t" "$t.s3" query entries
  compare "$t.s3" 1 "$t.e3"
  entries_check "$t.s3" 1 "$t.e3"
  plan_checks "$t"
done

echo
fx=cow/v9_txns_simple_meta
t="$out/index_secondary"
echo "### 4. hudi-edge index --secondary account_id on a fresh copy of $fx"
mkdir -p "$out/unzip.index" && unzip -q -o "$fixtures/$fx.zip" -d "$out/unzip.index" && mv "$out/unzip.index/$(basename "$fx")" "$t"
if "$bin" index "$t" --secondary account_id --json > "$t.index.json" 2> "$t.index.err"; then
  echo "  hudi-edge index --secondary account_id: $("$py" -c 'import json,sys; print(", ".join("%s (instant %s, %d file groups, %d records)" % (p["partition"], p["instant"], p["file_groups"], p["records"]) for p in json.load(open(sys.argv[1]))["partitions"]))' "$t.index.json")"
else
  echo "  hudi-edge index FAILED: $(tail -2 "$t.index.err")"; status=1
fi
echo "  hoodie.table.metadata.partitions=$(grep '^hoodie.table.metadata.partitions=' "$t/.hoodie/hoodie.properties" | cut -d= -f2)"
filters=("account_id = 'ACC-A'" "account_id in ('ACC-B', 'ACC-O')" "account_id = 'ACC-NEW'")
spark_filters=()
for f in "${filters[@]}"; do spark_filters+=(--filter "$f"); done
edge_reads "$t" "$t.e1"
spark "$t" "$t.s1" show-indexes query entries upsert query entries
echo "  Spark SHOW INDEXES: $(cat "$t.s1.indexes.txt" 2>/dev/null || echo FAILED)"
compare "$t.s1" 1 "$t.e1"
entries_check "$t.s1" 1 "$t.e1"
plan_checks "$t"
echo "  after Spark's upsert:"
edge_reads "$t" "$t.e2"
compare "$t.s1" 2 "$t.e2"
entries_check "$t.s1" 2 "$t.e2"
make_inputs "$t" after_spark
"$py" - "$out/upsert2.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
open(sys.argv[1], "w").write("".join(json.dumps({**r, "account_id": "ACC-NEW"}) + "\n" for r in rows))
PY
edge_write "$t" upsert2
edge_reads "$t" "$t.e3"
spark "$t" "$t.s3" query entries
compare "$t.s3" 1 "$t.e3"
entries_check "$t.s3" 1 "$t.e3"
plan_checks "$t"

echo
echo "# $(( (SECONDS - start) / 60 )) min; overall: $([ $status = 0 ] && echo PASS || echo 'FAIL (see DIFFERENT / FAIL lines)')"
exit $status
