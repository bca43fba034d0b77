#!/usr/bin/env bash
# The GPU performance run in one command (docs/perf.md, "Synthetic LlamaGen shapes and dispatch
# counts"): on the default Vulkan device (VKSPEC_DEVICE to choose), the capability record, the op
# benchmarks, `vkspec bench --synthetic` for LlamaGen-B/L/XL at 16x16 and 24x24 tokens each next
# to tools/torch_bench.py on the same GPU (ratio printed), and the shipped model's methods with
# wall-clock latency. Everything lands in OUT (default docs/bench/gpu), .txt and .json per step.
#
#   tools/gpu_bench.sh [OUT]      PYTHON=python3 with CUDA PyTorch; REPEAT=20; SHAPES="B L XL"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${VKSPEC_BUILD_DIR:-build}
out=${1:-docs/bench/gpu}
python=${PYTHON:-python3}
repeat=${REPEAT:-20}
shapes=${SHAPES:-B L XL}
vkspec="$build/cli/vkspec"
[ -x "$vkspec" ] || tools/build.sh
mkdir -p "$out"
"$vkspec" devices | tee "$out/devices.txt"
"$vkspec" bench-ops --repeat "$repeat" --json "$out/ops.json" | tee "$out/ops.txt"
for shape in $shapes; do
  for grid in 16 24; do
    name="${shape}_${grid}"
    "$vkspec" bench --synthetic "$shape" --grid "$grid" --repeat "$repeat" --json "$out/vkspec_$name.json" \
      | tee "$out/vkspec_$name.txt"
    # A failing PyTorch (no CUDA build, out of memory) must not lose the vkspec numbers.
    "$python" tools/torch_bench.py --shape "$shape" --grid "$grid" --repeat "$repeat" \
      --compare "$out/vkspec_$name.json" --json "$out/torch_$name.json" 2>&1 | tee "$out/torch_$name.txt" || true
  done
done
"$vkspec" bench --methods ar,sjd,scd-mc,scd-gs,zipar --images 20 --classifier none \
  --json "$out/methods_fmnist.json" | tee "$out/methods_fmnist.txt"
"$vkspec" bench --methods lantern --k 16 --images 20 --classifier none \
  --json "$out/lantern_fmnist.json" | tee "$out/lantern_fmnist.txt"
"$vkspec" bench --methods ar,sjd,scd-mc --sweep window=16,32,64 --images 20 --classifier none \
  --json "$out/window_sweep_fmnist.json" | tee "$out/window_sweep_fmnist.txt"
