#!/usr/bin/env bash
# Installs missing Debian packages and builds vkspec (Release) into ${VKSPEC_BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
build=${VKSPEC_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C "$build" -j"$(nproc)"
