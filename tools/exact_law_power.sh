#!/bin/sh
# The power of the exact-law tests (tests/test_exact_law.cpp) and the lossy methods' total
# variation from the exact law: runs the two disabled cases of test_exact_law, which take minutes.
#   tools/exact_law_power.sh [BUILD_DIR [power|tv]]   (default: build, both)
#   VKSPEC_POWER_IMAGES=1000,2000,3000,5000 VKSPEC_POWER_REPEATS=10 VKSPEC_TV_IMAGES=20000
#   VKSPEC_TV_METHODS=vvs,adaptive-tree (only those rows; default all)
#   VKSPEC_POWER_VARIANTS=0,5 (indices: the biased variants of test_exact_law.cpp, then ar; default all)
# Prints "power: VARIANT: N images: rejected R of REPEATS" and "tv: METHOD: ..." lines
# (docs/reliability.md, docs/methods.md).
set -eu
build=${1:-build}
case ${2:-both} in
  power) cases=exact_law.DISABLED_Power ;;
  tv) cases=exact_law.DISABLED_LossyTotalVariation ;;
  both) cases=exact_law.DISABLED_Power:exact_law.DISABLED_LossyTotalVariation ;;
  *) echo "exact_law_power.sh: the second argument is power, tv or nothing (both), not '$2'" >&2; exit 2 ;;
esac
export VKSPEC_VALIDATION=${VKSPEC_VALIDATION:-0} VKSPEC_CACHE_DIR=${VKSPEC_CACHE_DIR:-$build/test-cache}
exec "$build/tests/test_exact_law" --gtest_also_run_disabled_tests --gtest_filter="$cases"
