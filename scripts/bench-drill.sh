#!/usr/bin/env bash
# Drill-in against ctxtual (issue 28): `envelope proxy` and `ctxtual wrap` (ctxtual 0.5.0 from
# PyPI) in front of the same upstream MCP server, driven by the Python MCP SDK client in the
# same run: the cut, paging a 5 MB text and 12.6 MB of rows back, search p50.
#
#   scripts/bench-drill.sh [--envelope PATH] [--json FILE] [...]   (arguments go to the bench)
#
# Idempotent: creates ~/.cache/envelope-tools/ctxtual-venv with `ctxtual[mcp]==0.5.0` (pinned)
# when it is missing or holds another version; the client and the upstream server run on the
# Python SDK venv of scripts/install-mcp-tools.sh (~/.cache/envelope-tools/venv, package `mcp`).
# The envelope binary defaults to target/release/envelope; it is not built here (build it
# with `cargo build --release -p envelope-cli`, or give --envelope).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}"
sdk_python="$tools/venv/bin/python3"
ctx_venv="$tools/ctxtual-venv"
ctxtual_version="0.5.0"

if ! "$sdk_python" -c 'import mcp.server.mcpserver' 2>/dev/null; then
    echo "bench-drill: $sdk_python with the mcp package is missing: run scripts/install-mcp-tools.sh" >&2
    exit 1
fi

installed="$("$ctx_venv/bin/python3" -c 'import importlib.metadata as m; print(m.version("ctxtual"))' 2>/dev/null || true)"
if [ "$installed" != "$ctxtual_version" ] || ! "$ctx_venv/bin/python3" -c 'import fastmcp' 2>/dev/null; then
    echo "bench-drill: installing ctxtual[mcp]==$ctxtual_version into $ctx_venv" >&2
    python3 -m venv "$ctx_venv"
    "$ctx_venv/bin/pip" install --quiet --disable-pip-version-check "ctxtual[mcp]==$ctxtual_version"
fi

has_envelope=0
for arg in "$@"; do
    [ "$arg" = "--envelope" ] && has_envelope=1
done
extra=()
[ "$has_envelope" = 1 ] || extra=(--envelope "$root/target/release/envelope")

cd "$root"
exec "$sdk_python" benches/drill_vs_ctxtual.py \
    --ctxtual "$ctx_venv/bin/ctxtual" --python "$sdk_python" "${extra[@]}" "$@"
