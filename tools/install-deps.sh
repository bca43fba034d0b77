#!/usr/bin/env bash
# Installs the Debian 12 packages vkspec needs, only those missing. Idempotent.
# slurmctld, slurmd, slurm-client and munge are for the one-node Slurm cluster tools/slurm/'s
# CTest starts on localhost (tools/slurm/test_slurm_cluster.py); nothing here starts them.
# clang-format (14) is for tools/check_format.sh, CTest style.format. libpcre2-dev and libicu-dev are
# for engine/text/ (tokenizer.json regexes, Unicode normalization). python3-yaml reads Chameleon's
# vqgan.yaml (tools/chameleon_vqgan.py). libsentencepiece-dev reads T5's spiece.model
# (engine/text/sentencepiece_tokenizer.*); python3-sentencepiece trains the tests' tiny one.
# Usage: tools/install-deps.sh [--plots] [--profiling]   (--plots adds matplotlib for
# tools/plot_bench.py; --profiling adds perf, gdb and objdump for tools/jit_profile.py)
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev libvulkan-volk-dev mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
  glslang-tools glslang-dev spirv-tools spirv-cross libspirv-cross-c-shared-dev
  libglfw3-dev libimgui-dev libgtest-dev libgmock-dev libstb-dev libopenblas-dev
  libopenblas0-pthread nlohmann-json3-dev zlib1g-dev libpcre2-dev libicu-dev xvfb xauth x11-apps
  libsentencepiece-dev python3-sentencepiece
  python3-numpy python3-torch python3-yaml dataset-fashion-mnist pybind11-dev python3-dev python3-pytest clang-format
  slurmctld slurmd slurm-client munge
)
for arg in "$@"; do
  case "$arg" in
    --plots) pkgs+=(python3-matplotlib) ;;
    --profiling) pkgs+=(linux-perf gdb binutils) ;;
    *) echo "install-deps: unknown option $arg (known: --plots, --profiling)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
