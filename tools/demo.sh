#!/usr/bin/env bash
# README command 1: install, build, and run the main job on the default Vulkan device: generate a
# grid of Fashion-MNIST items (one per class) with the shipped model into out/samples.png.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build=${VKSPEC_BUILD_DIR:-build}
"$build/cli/vkspec" devices
mkdir -p out
if [ -f assets/fmnist_gpt16.safetensors ] && [ -f assets/fmnist_vq.safetensors ]; then
  "$build/cli/vkspec" generate --images 10 --seed 1 --out out/samples.png --trace out/trace.json
else
  echo "demo: the shipped models are not in assets/ yet (tools/train_all.sh trains them);" \
       "running the GPU self-test instead" >&2
  "$build/cli/vkspec" selftest
fi
