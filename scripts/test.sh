#!/usr/bin/env bash
# The whole test suite, from a fresh clone with ../shared beside it.
# Installs (idempotently) what the tests need beyond the Rust toolchain, then runs
# formatting and lint checks and every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

# Node.js runs the differential tests (JS JSON.stringify, Buffer base64, the ctxo
# reference algorithm). It ships with the machine image; install it if it does not.
if ! command -v node >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq nodejs >/dev/null
fi
if [ ! -d ../shared/fixtures ]; then
  echo "scripts/test.sh: ../shared (specs and fixtures) must sit beside the checkout" >&2
  exit 2
fi

# The real MCP servers and clients the proxy tests run (Node 22, npm and PyPI packages),
# cached outside the repo; the tests fail, naming this script, when they are missing. The
# Python ones (the MCP SDK, mcp-server-git, and moto, the S3-compatible server the S3 store
# tests start on 127.0.0.1, with boto3 to tamper with an object behind the store's back) are
# in a venv of their own, first on PATH for the tests, which run `python3`.
bash scripts/install-mcp-tools.sh
# The reference tokenizers (npm js-tiktoken under Node 22) the token counts are tested against.
bash scripts/install-token-refs.sh
export PATH="${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}/venv/bin:$PATH"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Every public item is documented (missing_docs is on) and every doc link resolves.
RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps --locked --quiet
log=$(mktemp)
# The registries the tests derive from OpenAPI documents are cached (issue 29): in a
# folder of this run, never the user's ~/.cache/envelope.
cache=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$cache"' EXIT
ENVELOPE_CACHE_DIR="$cache" cargo test --workspace --locked 2>&1 | tee "$log"
# One closing line for the whole run (cargo prints one per test binary, the last being
# the doc tests, which may hold none).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
