#!/usr/bin/env bash
# Bench-only: builds SeaweedFS (Apache-2.0; `weed server -s3`, an S3-compatible server in Go)
# from the Go module proxy at one exact version, for `tests/bench/edge_ingest.mjs --server
# seaweedfs`. Its go.mod has a replace directive, which `go install pkg@version` refuses, so
# the module is downloaded and built as the main module. Output: $HUDI_EDGE_CACHE/bin/weed.
# Not part of .ci/setup (no test needs it). Takes ~15-25 min on 2 cores.
set -euo pipefail
version=v0.0.0-20261109003541-7506e5f91cd6
cache="${HUDI_EDGE_CACHE:-$HOME/.cache/hudi-edge}"
out="$cache/bin/weed"
if [ -x "$out" ] && [ "$(cat "$out.version" 2>/dev/null)" = "$version" ]; then
  echo "$out ($version) is there"
  exit 0
fi
mkdir -p "$cache/bin"
src=$(go mod download -json "github.com/seaweedfs/seaweedfs@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
work=$(mktemp -d "${TMPDIR:-/tmp}/weed-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
(cd "$work" && go build -o "$out" ./weed)
echo "$version" > "$out.version"
echo "built $out ($version)"
