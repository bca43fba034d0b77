#!/usr/bin/env bash
# tools/gpu_bench.sh on a machine that has a GPU driver but no Vulkan loader, no build tools and no
# network (a lent benchmark machine), from a checkout whose ignored folder .gl/ carries the rest.
#
#   tools/gpu_carry.sh pack        here: Release build, the binary stripped and xz'ed into .gl/,
#                                  with the Debian packages it needs there (apt-get download)
#   tools/gpu_carry.sh run OUT [SCRIPT]
#                                  there: unpacks .gl/, finds the NVIDIA ICD, runs
#                                  tools/gpu_bench.sh OUT/r (its environment variables pass
#                                  through; or SCRIPT OUT, a focused check carried in .gl/), then
#                                  OUT/gpu.tgz of OUT/r (where only a few files may come back)
#
# Why each package: libvulkan1 is the loader; the NVIDIA ICD (libGLX_nvidia.so.0) needs glvnd
# (libglvnd0, libglx0, ...): without them the loader reports "Could not get 'vkCreateInstance'
# via 'vk_icdGetInstanceProcAddr'". vkspec links OpenBLAS, whose packages are unpacked under
# /tmp/gl (unpacking them over / can break the machine's own libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  pack)
    grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >>.git/info/exclude
    mkdir -p .gl
    lists=$(mktemp -d)
    mkdir -p "$lists/partial"
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
    apt-get "${o[@]}" update >/dev/null
    (cd .gl && apt-get "${o[@]}" download libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libgles2 libopengl0 \
      libopenblas0-pthread libgfortran5 libquadmath0)
    VKSPEC_BUILD_DIR=${VKSPEC_BUILD_DIR:-build} tools/build.sh
    strip -o .gl/vkspec "${VKSPEC_BUILD_DIR:-build}/cli/vkspec"
    xz -9 -f .gl/vkspec
    pwd >.gl/source_dir  # paths baked into the binary (assets, docs/bench) start here
    du -sh .gl
    ;;
  run)
    out=${2:?usage: tools/gpu_carry.sh run OUT}
    mkdir -p /tmp/gl
    for f in .gl/*.deb; do
      case $f in
        *openblas* | *gfortran* | *quadmath*) dpkg -x "$f" /tmp/gl ;;
        *) dpkg -x "$f" / ;;
      esac
    done
    ldconfig
    lib=/tmp/gl/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    mkdir -p build-gpu/cli
    xz -dc .gl/vkspec.xz >build-gpu/cli/vkspec
    chmod +x build-gpu/cli/vkspec
    src=$(cat .gl/source_dir)  # the build baked the packing machine's source path in
    if [ ! -e "$src" ]; then
      mkdir -p "$(dirname "$src")"
      ln -s "$PWD" "$src"
    fi
    if ! build-gpu/cli/vkspec devices >/dev/null 2>&1; then
      export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
      build-gpu/cli/vkspec devices >/dev/null || exit 3
    fi
    rc=0
    if [ -n "${3:-}" ]; then
      VKSPEC_BUILD_DIR=build-gpu bash "$3" "$out" >"$out/log.txt" 2>&1 || rc=$?
    else
      VKSPEC_BUILD_DIR=build-gpu tools/gpu_bench.sh "$out/r" >"$out/log.txt" 2>&1 || rc=$?
    fi
    tar czf "$out/gpu.tgz" -C "$out" r && rm -rf "$out/r"
    grep -E '^== |^gpu_bench: (failed|skipped)' "$out/log.txt" || true
    exit "$rc"
    ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
