#!/usr/bin/env bash
# README command 1: install, build, and run the main job on the default Vulkan device: generate a
# grid of Fashion-MNIST items (one per class) with the shipped model into out/samples.png, and
# four ankle boots from the prompt "an ankle boot" into out/ankle_boot.png.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build=${VKSPEC_BUILD_DIR:-build}
"$build/cli/vkspec" devices
mkdir -p out
if [ -f assets/fmnist_gpt16.safetensors ] && [ -f assets/fmnist_vq.safetensors ]; then
  "$build/cli/vkspec" generate --images 10 --seed 1 --out out/samples.png --trace out/trace.json
  # From words: the shipped prompt model (a tiny Janus-Pro trained on Fashion-MNIST captions).
  if [ -f assets/fmnist_janus.safetensors ]; then
    "$build/cli/vkspec" generate --prompt "an ankle boot" --method scd-mc --images 4 --out out/ankle_boot.png \
      --trace out/ankle_boot.json
  fi
else
  echo "demo: the shipped models are not in assets/ yet (tools/train_all.sh trains them);" \
       "running the GPU self-test instead" >&2
  "$build/cli/vkspec" selftest
fi
