#!/usr/bin/env bash
# Every op check on each Vulkan implementation this machine has (the system's, and SwiftShader
# and Mesa 25's lavapipe from tools/install-drivers.sh), as `vkspec selftest --json` files for
# docs/devices/; with --lossless also the whole lossless suite on each (CTest's drivers.* tests
# run three of its cases). Usage (from the repository root, after a build):
#   tools/driver_matrix.sh OUT_DIR [--lossless]
set -euo pipefail
out=${1:?usage: tools/driver_matrix.sh OUT_DIR [--lossless]}
build=${VKSPEC_BUILD_DIR:-build}
mkdir -p "$out"
export VKSPEC_VALIDATION=1 VKSPEC_FENCE_TIMEOUT_MS=600000
day=$(date +%Y%m%d)
for driver in system swiftshader lavapipe25; do
  run=(tools/with-driver.sh "$driver")
  [ "$driver" = system ] && run=()
  echo "== $driver" >&2
  "${run[@]}" "$build/cli/vkspec" selftest --json "$out/selftest-$driver-$day.json" | tail -n 1
  if [ "${2:-}" = --lossless ]; then
    "${run[@]}" "$build/tests/test_decoding_lossless" | grep -E '^\[  (PASSED|FAILED) |tests ran'
  fi
done
