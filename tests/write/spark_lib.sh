# Shared by the tests/write/spark_*.sh scripts (sourced, from the repository root, with
# `out` set): the CLI (built unless HUDI_EDGE_BIN names one), the venv's python, `out` made
# empty, and row-set comparisons that print one line each and set `status=1` on a difference.
if [ -z "${HUDI_EDGE_BIN:-}" ]; then cargo build -q --bin hudi-edge; fi
rm -rf "$out" && mkdir -p "$out"
bin=${HUDI_EDGE_BIN:-target/debug/hudi-edge}
py="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/venv/bin/python"
status=0

# Our snapshot of table $1 in the oracle encoding, one JSON object per line.
ours() { "$bin" read "$1" --format oracle-jsonl; }

# Our rows of table $1 for each query $3... (snapshot, as_of=T, incremental=START,END) into
# file $2, tagged with the query as tests/write/spark_queries.py tags Spark's.
ours_queries() {
  local t=$1 file=$2 q r args; shift 2
  : > "$file"
  for q in "$@"; do
    case "$q" in
      snapshot) args=() ;;
      as_of=*) args=(--as-of "${q#as_of=}") ;;
      incremental=*) r=${q#incremental=}; args=(--query incremental --start "${r%,*}" --end "${r#*,}") ;;
    esac
    "$bin" read "$t" "${args[@]}" --format oracle-jsonl | "$py" -c '
import json, sys
for line in sys.stdin:
    print(json.dumps({"query": sys.argv[1], "row": json.loads(line)}, sort_keys=True))' "$q" >> "$file"
  done
}

sorted_json() { "$py" -c '
import json, sys
for line in sorted(json.dumps(json.loads(l), sort_keys=True) for l in open(sys.argv[1]) if l.strip()):
    print(line)' "$1"; }

same() { # what, left file, right file
  if diff -q <(sorted_json "$2") <(sorted_json "$3") > /dev/null; then
    echo "  $1: same ($(grep -c . "$2") rows)"
  else
    echo "  $1: DIFFERENT"; diff <(sorted_json "$2") <(sorted_json "$3") | head -5 || true; status=1
  fi
}

# tests/write/spark_after.py on table $1 as step $2 with flags $3..., its report summarized,
# then Spark's snapshot against ours.
spark_step() {
  local t=$1 step=$2; shift 2
  tests/spark/run.sh tests/write/spark_after.py "$t" "$@" --report "$t.$step.json" \
    > "$t.spark$step.jsonl" 2> "$t.spark$step.err" || { tail -5 "$t.spark$step.err"; status=1; }
  echo "  spark ($step: ${*:-upsert}): $("$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
out = ["%d rows" % r["rows"]]
if "files_procedure_rows" in r:
    out.append("files procedure %d files, %d mismatches" % (r["files_procedure_rows"], len(r["files_mismatches"])))
if "record_index_entries" in r:
    bad = sum(len(r[k]) for k in ("keys_missing_from_index", "index_keys_not_in_snapshot", "keys_in_other_file_group"))
    out.append("record index %d entries for %d keys, %d wrong" % (r["record_index_entries"], r["snapshot_keys"], bad))
print("; ".join(out))' "$t.$step.json")"
  ours "$t" > "$t.ours$step.jsonl"
  same "Spark vs hudi-edge" "$t.spark$step.jsonl" "$t.ours$step.jsonl"
}

# No record key twice in Spark's rows $1 of table $2, keys by the table's key fields (Spark's
# index missing one of our keys would write it again into another file group).
no_key_twice() {
  "$py" - "$1" "$("$bin" info "$2" --json)" <<'PY' || status=1
import collections, json, sys
fields = json.loads(sys.argv[2])["record_key_fields"]
keys = collections.Counter(tuple(json.loads(l).get(f) for f in fields) for l in open(sys.argv[1]) if l.strip())
twice = [k for k, c in keys.items() if c > 1]
print(f"  keys held twice after Spark's upsert: {len(twice)}" + (f" {twice[:5]}" if twice else ""))
sys.exit(1 if twice else 0)
PY
}

# Three rows of our snapshot of table $1 into file $2 as an upsert: their text column (name
# or note) edited to "edge-after-spark", their ordering field raised so the update wins.
edit_three_rows() {
  "$bin" read "$1" --format jsonl | "$py" -c '
import json, sys
info = json.loads(sys.argv[1])
fixed = set(info["record_key_fields"]) | set(info["partition_fields"]) | set(info["ordering_fields"])
ordering = info["ordering_fields"][0]
for line in list(sys.stdin)[:3]:
    r = {k: v for k, v in json.loads(line).items() if not k.startswith("_hoodie_")}
    text = next(k for k in ("name", "note") if k in r and k not in fixed)
    r[text] = "edge-after-spark"
    r[ordering] += 1000
    print(json.dumps(r))' "$("$bin" info "$1" --json)" > "$2"
}

# Spark and we take turns on table $1: Spark upserts (no key may come back twice) and we read
# it; we upsert three edited rows and Spark reads them.
take_turns_with_spark() {
  local t=$1
  spark_step "$t" 2
  no_key_twice "$t.spark2.jsonl" "$t"
  edit_three_rows "$t" "$t.after_spark.jsonl"
  if "$bin" write "$t" --input "$t.after_spark.jsonl" > /dev/null; then
    echo "  hudi-edge upsert after Spark: committed"
  else
    status=1
  fi
  spark_step "$t" 3 --read-only
  "$py" - "$t.spark3.jsonl" <<'PY' || status=1
import json, sys
ours = sum("edge-after-spark" in json.loads(l).values() for l in open(sys.argv[1]) if l.strip())
print(f"  rows Spark reads with our update: {ours} (of 3)")
sys.exit(0 if ours == 3 else 1)
PY
}

# Table $1 read by hudi-rs (PyPI hudi) against ours.
hudi_rs_same() {
  "$py" tests/write/hudi_rs_rows.py "$1" > "$1.hudi_rs.jsonl"
  ours "$1" > "$1.ours_now.jsonl"
  same "hudi-rs vs hudi-edge" "$1.hudi_rs.jsonl" "$1.ours_now.jsonl"
}

# One report's MDT checks in a few lines; its problems in full.
mdt_summary() {
  "$py" - "$1" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
p, j, t = r.get("procedures", {}), r.get("java", {}), r.get("mdt_as_table", {})
v = p.get("validate_metadata_table_files", {})
parts = []
parts.append(f"MDT partitions {','.join(r['metadata_partitions'])}")
parts.append(f"validate_metadata_table_files {v.get('rows', '?')} files, {len(v.get('mismatches', [])) if 'error' not in v else 'ERROR'} mismatches")
if "error" not in j:
    parts.append(f"HoodieBackedTableMetadata: files vs disk {j.get('files_vs_disk') if j.get('files_vs_disk') == 'same' else 'DIFFERENT'}, "
                 f"latest slices MDT vs listing {'same' if j.get('latest_file_slices_mdt_vs_listing') == 'same' else 'DIFFERENT'}, "
                 f"file groups {'same' if j.get('all_file_groups_mdt_vs_listing') == 'same' else 'DIFFERENT'}, "
                 f"latest commit {j['latest_commit']['action']} {j['latest_commit']['files']} files sizes {'ok' if not j['latest_commit']['mdt_size_mismatch'] else 'DIFFER'}")
    if "column_stats" in j:
        c = j["column_stats"]
        parts.append(f"getColumnStats: {c['entries']} entries for {c['latest_base_files']} base + {c['latest_log_files']} log latest files x {len(c['columns'])} columns, "
                     f"{c['missing_base_count']} missing (base), {c['missing_log_count']} missing (log), {c['differs_count']} differ from the files' values, "
                     f"{c['footer_differs_count']} differ from ParquetUtils' footer reading")
    if "record_index" in j:
        x = j["record_index"]
        parts.append(f"readRecordIndexLocationsWithKeys: {x['found']} of {x['live_keys']} live keys, {x['wrong_count']} at another location")
if "error" not in t:
    s = f"MDT as a table: records by type {t.get('records_by_type')}, files vs disk {'same' if t.get('files_vs_disk') == 'same' else 'DIFFERENT'}"
    if "column_stats" in t:
        s += f", column_stats {t['column_stats']['missing_base_count']} missing for latest base files ({t['column_stats']['missing_log_count']} for log files)"
    if "partition_stats" in t:
        s += f", partition_stats {len(t['partition_stats']['missing'])} missing / {len(t['partition_stats']['narrower_than_files'])} narrower than the files"
    if "record_index" in t:
        x = t["record_index"]
        s += f", record_index {x['entries']} entries for {x['live_keys']} live keys, {len(x['keys_missing_from_index'])} missing, {len(x['index_keys_not_live'])} extra, {x['wrong_count']} wrong file id"
    parts.append(s)
for x in parts:
    print("  " + x)
probs = r.get("problems", [])
print(f"  MDT checks: {'PASS' if not probs else 'FAIL'}")
for x in probs:
    print("    PROBLEM: " + x[:1500])
for x in r.get("findings", []):
    print("    FINDING: " + x[:1500])
sys.exit(1 if probs or r.get("findings") else 0)
PY
}
