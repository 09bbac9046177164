#!/usr/bin/env bash
# Hudi's storage-based lock at the format level, against Apache Hudi 1.1.1's own classes
# (the Spark bundle's StorageLockData / StorageLockFile): a lock file written by hudi-edge is
# read by Java, and lock files written by Java are honoured by hudi-edge — held (not
# expired) it makes our acquire time out with CONFLICT naming Java's owner; expired, ours
# takes it over. Java's bytes for a fixed lock equal ours byte for byte.
# A live run beside a Spark writer needs Hudi's S3 lock client (the hudi-aws bundle), which
# the Maven mirror here does not carry; this is what runs instead.
# Usage: tests/spark/lock_interop.sh [HUDI_EDGE_BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
jar="$cache/spark/jars/hudi-spark3.5-bundle_2.12-1.1.1.jar"
[ -f "$jar" ] || { echo "missing $jar: run tests/spark/setup.sh" >&2; exit 1; }
bin="${1:-${CARGO_TARGET_DIR:-target}/debug/hudi-edge}"
[ -n "${1:-}" ] || cargo build -q --bin hudi-edge
cp="$jar:$(ls "$cache"/spark/venv/lib/python3.*/site-packages/pyspark/jars/*.jar | tr '\n' ':')"
work=$(mktemp -d "${TMPDIR:-/tmp}/lock-interop.XXXXXX")
trap 'rm -rf "$work"' EXIT
javac -d "$work" -cp "$cp" tests/spark/lock/LockJson.java
java_lock() { java -cp "$cp:$work" LockJson "$@"; }
table="$work/t"
mkdir -p "$table/.hoodie"
lock="$table/.hoodie/.locks/table_lock.json"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The same lock, serialized by both.
java_lock write "$work/java.json" false 1700000000000 owner-1
printf '%s' '{"expired":false,"validUntil":1700000000000,"owner":"owner-1"}' > "$work/ours.json"
cmp -s "$work/java.json" "$work/ours.json" || fail "bytes differ: $(cat "$work/java.json")"
echo "same bytes: $(cat "$work/java.json")"

# 2. Ours, read by Java (taken and released: expired, our owner).
out=$("$bin" lock "$table")
owner=$("$cache/venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["owner"])' <<< "$out")
read -r expired valid jowner <<< "$(java_lock read "$lock")"
[ "$expired" = true ] && [ "$jowner" = "$owner" ] || fail "Java read $expired $valid $jowner"
echo "ours read by Java: expired=$expired validUntil=$valid owner=$jowner"
# Held by us (another process holds it 3 s): Java sees it live.
"$bin" lock "$table" --hold-ms 3000 > "$work/held.json" &
holder=$!
for _ in $(seq 100); do
  read -r expired _ _ <<< "$(java_lock read "$lock" 2>/dev/null || echo x)"
  [ "$expired" = false ] && break
  sleep 0.1
done
[ "$expired" = false ] || fail "Java never saw our lock held"
echo "ours while held, read by Java: expired=false"
wait "$holder"

# 3. Java's, honoured by us: live → CONFLICT naming Java's owner; expired → taken over.
now_ms=$(($(date +%s%N) / 1000000))
java_lock write "$lock" false $((now_ms + 60000)) java-writer-1
if err=$("$bin" lock "$table" --option hoodie.write.lock.wait_time_ms=1500 2>&1); then
  fail "took a lock Java holds: $err"
fi
grep -q 'CONFLICT' <<< "$err" && grep -q 'java-writer-1' <<< "$err" || fail "unexpected refusal: $err"
echo "Java's live lock refused us: $(head -c 160 <<< "$err")"
java_lock write "$lock" true $((now_ms + 60000)) java-writer-1
"$bin" lock "$table" > /dev/null || fail "could not take Java's expired lock"
read -r expired _ jowner <<< "$(java_lock read "$lock")"
[ "$jowner" != java-writer-1 ] || fail "owner unchanged"
echo "Java's expired lock taken over by us (owner now $jowner)"
# A lock past validUntil by more than the 500 ms drift allowance is dangling: taken over.
java_lock write "$lock" false $((now_ms - 1000)) java-crashed
"$bin" lock "$table" > /dev/null || fail "could not take a dangling Java lock"
echo "Java's dangling lock (validUntil 1 s ago) taken over"
echo "OK"
