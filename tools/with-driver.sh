#!/usr/bin/env bash
# Runs a command on one of the Vulkan implementations tools/install-drivers.sh extracted:
#   tools/with-driver.sh swiftshader|lavapipe25 COMMAND [ARGS...]
# Exits 77 (CTest's skip) when that driver has not been extracted.
set -euo pipefail
name=${1:?usage: with-driver.sh swiftshader|lavapipe25 COMMAND [ARGS...]}
shift
dir=${VKSPEC_DRIVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/drivers}
if [ ! -f "$dir/$name/env" ]; then
  echo "SKIP: no $name driver in $dir (tools/install-drivers.sh extracts it)"
  exit 77
fi
while IFS='=' read -r key value; do
  if [ -n "$value" ]; then export "$key=$value"; fi
done < "$dir/$name/env"
# Mesa 25's llvmpipe keys its shader disk cache by the CPU's features but not by
# LP_NATIVE_VECTOR_WIDTH, so code compiled at one width is loaded at another: SIGSEGV in JIT code
# or wrong results (docs/perf.md, "Lavapipe 25 at forced subgroup 4 crashes"). A forced width gets
# a cache of its own per driver, unless the caller chose one; the default width keeps Mesa's
# (cold, lavapipe 25 compiles the whole selftest for many minutes).
if [ -z "${MESA_SHADER_CACHE_DIR:-}" ] && [ -n "${LP_NATIVE_VECTOR_WIDTH:-}" ]; then
  export MESA_SHADER_CACHE_DIR="$dir/$name/shader-cache/width-$LP_NATIVE_VECTOR_WIDTH"
  mkdir -p "$MESA_SHADER_CACHE_DIR"
fi
unset VK_ICD_FILENAMES  # the older name would take precedence over VK_DRIVER_FILES in some loaders
exec "$@"
