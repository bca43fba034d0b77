#!/usr/bin/env bash
# Extracts the Vulkan implementations the tests run on besides the system's lavapipe into a cache
# folder, installing nothing and leaving the system's driver alone:
#   swiftshader  Google's CPU Vulkan (Vulkan 1.3, subgroup 4, no push descriptors, no 16-bit
#                storage, no int64, 256-byte offset alignment), libvk_swiftshader.so from Debian's
#                chromium-common;
#   lavapipe25   Mesa 25.0 lavapipe from bookworm-backports' mesa-vulkan-drivers, with the libdrm2
#                and libdrm-amdgpu1 it needs from there beside it.
# Each gets DIR/NAME/icd.json and DIR/NAME/env (VK_DRIVER_FILES, LD_LIBRARY_PATH), which
# tools/with-driver.sh reads. Idempotent: a driver already extracted is kept. Packages come from a
# private apt state in DIR/apt (bookworm, -updates, -security, -backports), so the system's
# sources and package lists are not touched either.
# Usage: tools/install-drivers.sh [DIR]
#   (default DIR: $VKSPEC_DRIVER_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/drivers)
set -euo pipefail

dir=${1:-${VKSPEC_DRIVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/drivers}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -f "$dir/swiftshader/env" ] && [ -f "$dir/lavapipe25/env" ] && exit 0

apt_dir="$dir/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
cat > "$apt_dir/sources.list" <<SOURCES
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
deb http://deb.debian.org/debian bookworm-backports main
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::Archives=$apt_dir/archives"
          -o "Dir::State::Status=$apt_dir/status" -o APT::Sandbox::User="$(id -un)" -qq)
touch "$apt_dir/status"
echo "install-drivers: fetching package lists into $apt_dir" >&2
apt-get "${apt_opts[@]}" update >&2
download() {  # package[/suite] ... -> the .deb files, in $apt_dir/debs
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$@" >&2)
}

write_driver() {  # name library_path api_version ld_library_path
  local name=$1 lib=$2 api=$3 ld=$4
  printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "%s"}}\n' \
    "$lib" "$api" > "$dir/$name/icd.json"
  { echo "VK_DRIVER_FILES=$dir/$name/icd.json"; echo "LD_LIBRARY_PATH=$ld"; } > "$dir/$name/env.tmp"
  mv "$dir/$name/env.tmp" "$dir/$name/env"  # last: its presence means the driver is complete
  echo "install-drivers: $name in $dir/$name" >&2
}

if [ ! -f "$dir/swiftshader/env" ]; then
  rm -rf "$dir/swiftshader" && mkdir -p "$dir/swiftshader"
  download chromium-common
  deb=$(ls "$apt_dir"/debs/chromium-common_*.deb | tail -n 1)
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/swiftshader" ./usr/lib/chromium/libvk_swiftshader.so
  basename "$deb" > "$dir/swiftshader/package"
  write_driver swiftshader "$dir/swiftshader/usr/lib/chromium/libvk_swiftshader.so" 1.3.0 ""
fi

if [ ! -f "$dir/lavapipe25/env" ]; then
  rm -rf "$dir/lavapipe25" && mkdir -p "$dir/lavapipe25"
  download mesa-vulkan-drivers/bookworm-backports libdrm2/bookworm-backports libdrm-amdgpu1/bookworm-backports
  : > "$dir/lavapipe25/package"
  for p in mesa-vulkan-drivers libdrm2 libdrm-amdgpu1; do
    deb=$(ls "$apt_dir"/debs/${p}_*bpo12*.deb | tail -n 1)
    dpkg-deb -x "$deb" "$dir/lavapipe25"
    basename "$deb" >> "$dir/lavapipe25/package"
  done
  lib=$(find "$dir/lavapipe25/usr/lib" -name libvulkan_lvp.so | head -n 1)
  [ -n "$lib" ] || { echo "install-drivers: no libvulkan_lvp.so in mesa-vulkan-drivers" >&2; exit 1; }
  write_driver lavapipe25 "$lib" 1.4.305 "$(dirname "$lib")"
fi
rm -rf "$apt_dir"  # the lists and packages: only the extracted drivers are kept
