#!/usr/bin/env bash
# Two builds of the CLI side by side (A: e.g. the last release, B: the change), on identical
# copies of the same tables, turn by turn so both see the same machine load:
#   - N upserts of 100 rows (50 updates of existing keys spread over the table, 50 new keys)
#     into a 100k-row Merge-On-Read table created here, into a Copy-On-Write one, and into a
#     Spark-written v9 table with a metadata table (files, column_stats, partition_stats,
#     record_index); local files, and again with 20 ms added per request;
#   - the Merge-On-Read merge hot path: a full snapshot read of the MOR table after its
#     upserts (every slice a base file and log files), R times each.
# Prints medians of wall time and, for writes, requests; checks both builds end with the
# same rows.
#
# Usage: tests/bench/ab_write.sh A_BIN B_BIN [UPSERTS] [READS]
# Needs: .ci/setup (the venv's Python makes the rows).
set -euo pipefail
cd "$(dirname "$0")/../.."
a=$(realpath "$1")
b=$(realpath "$2")
upserts="${3:-15}"
reads="${4:-5}"
py="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}/venv/bin/python"
work=$(mktemp -d "${TMPDIR:-/tmp}/ab-write.XXXXXX")
trap 'rm -rf "$work"' EXIT

ms() { "$py" -c 'import time; print(int(time.time() * 1000))'; }
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# rows.py SEED N_UPDATES N_INSERTS EXISTING NEW_FROM: JSON lines of the created tables' schema.
cat > "$work/rows.py" <<'EOF'
import json, random, sys
seed, updates, inserts, existing, new_from = map(int, sys.argv[1:])
rnd = random.Random(seed)
keys = rnd.sample(range(existing), updates) + list(range(new_from, new_from + inserts))
for k in keys:
    print(json.dumps({"id": f"K{k:07d}", "ts": seed * 1000 + k, "region": f"r{k % 8}",
                      "v": rnd.random(), "note": "x" * 40}))
EOF

make_table() { # TYPE DIR
  "$b" create "$2" --type "$1" --columns "id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE, note STRING" \
    --record-key id --partition-by region --ordering ts >/dev/null
  "$py" "$work/rows.py" 0 0 100000 0 0 > "$work/seed.jsonl"
  "$b" write "$2" --input "$work/seed.jsonl" >/dev/null
}

mkdir -p "$work/src"
make_table mor "$work/src/mor"
make_table cow "$work/src/cow"
(cd "$work/src" && unzip -q "$OLDPWD/tests/data/fixtures/tables/sample_table/cow/v9_txns_simple_overwrite.zip")
mdt_src=$(find "$work/src" -maxdepth 3 -name .hoodie -printf '%h\n' | grep -v '/mor$\|/cow$' | head -1)
mdt_template=$("$b" read "$mdt_src" | head -1 | "$py" -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(json.dumps({k: v for k, v in r.items() if not k.startswith("_hoodie_")}))')

# mdt_rows.py SEED: 50 updates of the fixture's keys would be few; its rows are new keys
# in its partitions, half of them written again by the next upsert (updates).
cat > "$work/mdt_rows.py" <<'EOF'
import json, sys
seed, template = int(sys.argv[1]), json.loads(sys.argv[2])
for i in range(100):
    k = seed * 50 + i  # the next seed's first 50 keys are this seed's last 50: updates
    r = dict(template, txn_id=f"AB-{k:07d}", txn_ts=template["txn_ts"] + seed)
    print(json.dumps(r))
EOF

for name in mor cow mdt; do
  for who in a b; do
    if [ "$name" = mdt ]; then cp -r "$mdt_src" "$work/$name-$who"; else cp -r "$work/src/$name" "$work/$name-$who"; fi
  done
done

printf '%-26s %8s %8s %8s %8s %9s %9s\n' "upserts ($upserts each)" "A ms" "B ms" "B/A" "A req" "B req" "latency"
for latency in 0 20; do
  for name in mor cow mdt; do
    : > "$work/a.ms"; : > "$work/b.ms"; : > "$work/a.req"; : > "$work/b.req"
    for i in $(seq 1 "$upserts"); do
      seed=$((latency * 1000 + i))
      if [ "$name" = mdt ]; then
        "$py" "$work/mdt_rows.py" "$seed" "$mdt_template" > "$work/in.jsonl"
      else
        "$py" "$work/rows.py" "$seed" 50 50 100000 $((100000 + seed * 50)) > "$work/in.jsonl"
      fi
      for who in a b; do
        bin=$a; [ "$who" = b ] && bin=$b
        start=$(ms)
        "$bin" write "$work/$name-$who" --input "$work/in.jsonl" --json --latency-ms "$latency" > "$work/out.json"
        echo $(($(ms) - start)) >> "$work/$who.ms"
        "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["io"]["requests"])' "$work/out.json" >> "$work/$who.req"
      done
    done
    am=$(median < "$work/a.ms"); bm=$(median < "$work/b.ms")
    printf '%-26s %8s %8s %8.2f %8s %9s %6s ms\n' "$name" "$am" "$bm" "$(echo "$bm / $am" | bc -l)" \
      "$(median < "$work/a.req")" "$(median < "$work/b.req")" "$latency"
  done
done

for name in mor cow mdt; do
  ra=$("$a" read "$work/$name-a" --columns "$([ $name = mdt ] && echo txn_id || echo id)" | sort | md5sum | cut -c1-12)
  rb=$("$b" read "$work/$name-b" --columns "$([ $name = mdt ] && echo txn_id || echo id)" | sort | md5sum | cut -c1-12)
  n=$("$b" read "$work/$name-b" --columns "$([ $name = mdt ] && echo txn_id || echo id)" | wc -l)
  [ "$ra" = "$rb" ] || { echo "$name: A and B end with different keys ($ra vs $rb)"; exit 1; }
  echo "$name: both builds end with the same $n keys"
done

# The merge hot path: one table (B's MOR copy), read by both builds in turn.
rows=$("$b" read "$work/mor-b" --columns id | wc -l)
: > "$work/a.ms"; : > "$work/b.ms"
for i in $(seq 1 "$reads"); do
  for who in a b; do
    bin=$a; [ "$who" = b ] && bin=$b
    start=$(ms)
    "$bin" read "$work/mor-b" --format arrow > "$work/out.arrow"
    echo $(($(ms) - start)) >> "$work/$who.ms"
  done
done
am=$(median < "$work/a.ms"); bm=$(median < "$work/b.ms")
printf 'MOR full read (%s rows, %s runs): A %s ms, B %s ms, B/A %.2f\n' "$rows" "$reads" "$am" "$bm" "$(echo "$bm / $am" | bc -l)"
