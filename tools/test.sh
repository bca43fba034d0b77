#!/usr/bin/env bash
# README command 2: install, build, and run the whole test suite (validation layer on in every
# Vulkan test). Extra arguments go to ctest (e.g. -R attention).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build=${VKSPEC_BUILD_DIR:-build}
cd "$build"
ctest -j"$(nproc)" --output-on-failure --timeout 600 "$@"
