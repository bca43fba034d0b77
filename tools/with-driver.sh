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
unset VK_ICD_FILENAMES  # the older name would take precedence over VK_DRIVER_FILES in some loaders
exec "$@"
