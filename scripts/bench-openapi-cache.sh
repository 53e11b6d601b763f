#!/usr/bin/env bash
# Load once (issue 29, docs/benchmarks.md "OpenAPI sources: load once"): `envelope call` of
# one operation and `envelope ops list` over a large OpenAPI document, the first run (no
# cache entry: the document is derived and kept) and the runs after it (read back), for
# each binary given. Time and peak RSS from /usr/bin/time; the echo server of the tests is
# the API (127.0.0.1 only).
#
#   scripts/bench-openapi-cache.sh DOCUMENT OPERATION INPUT BINARY...
#   scripts/bench-openapi-cache.sh gh.json gh.repos/get '{"owner":"o","repo":"r"}' \
#       /tmp/envelope-before target/release/envelope
set -euo pipefail
doc=$(realpath "$1")
op=$2
input=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 "$root/crates/envelope-ops/tests/fixtures/http_echo_server.py" "$port" &
echo_pid=$!
trap 'kill $echo_pid; rm -rf "$work"' EXIT
sleep 1
measure() { # label, command...
    local label=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" ||
        { cat "$work/err" >&2; exit 1; }
    read -r secs kb <"$work/time"
    printf '%-34s %7.2f s %8.1f MB  %s bytes out\n' "$label" "$secs" "$(echo "$kb/1024" | bc -l)" \
        "$(wc -c <"$work/out")"
}
for bin in "$@"; do
    bin=$(realpath "$bin")
    dir="$work/$(basename "$bin")-$RANDOM"
    mkdir -p "$dir"
    printf '[openapi.gh]\nspec = %s\nbaseUrl = "http://127.0.0.1:%s/echo"\ncache = "cache"\n' \
        "\"$doc\"" "$port" >"$dir/envelope.toml"
    echo "== $bin"
    measure "call (first run: derives, keeps)" "$bin" call "$op" --registry "$dir/envelope.toml" --input "$input"
    for i in 1 2 3; do
        measure "call (kept) #$i" "$bin" call "$op" --registry "$dir/envelope.toml" --input "$input"
    done
    for i in 1 2; do
        measure "ops list (kept) #$i" "$bin" ops list --registry "$dir/envelope.toml"
    done
    md5sum <"$work/out" | sed 's/^/ops list md5 /'
    ls -l "$dir/cache/openapi" | awk 'NR>1 {print "cache entry", $5, "bytes"}'
done
