#!/usr/bin/env bash
# README command 1: install, build, and run the main job on the default Vulkan device.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build=${VKSPEC_BUILD_DIR:-build}
"$build/cli/vkspec" devices
"$build/cli/vkspec" selftest
