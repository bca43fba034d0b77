#!/usr/bin/env bash
# Lists the C++ files whose formatting differs from what clang-format makes of them under the
# repository's .clang-format, and exits 1 when there is any (CTest style.format).
# usage: tools/check_format.sh [--fix] [PATH...]
#   PATH: files or folders (default: the product sources: cli engine decoding frontend eval viewer
#   common python tests fuzz tools, every *.cpp and *.h outside third_party/). --fix reformats them in place.
# clang-format 14 (Debian 12's) is the reference: another version may break lines differently.
# $CLANG_FORMAT names the binary; exits 77 (skipped) when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
for a in "$@"; do
  case "$a" in -*) echo "check_format: unknown option $a (usage: $0 [--fix] [PATH...])" >&2; exit 2 ;; esac
done

tool=${CLANG_FORMAT:-}
if [ -z "$tool" ]; then
  for t in clang-format-14 clang-format; do
    if command -v "$t" >/dev/null; then tool=$t; break; fi
  done
fi
if [ -z "$tool" ] || ! command -v "$tool" >/dev/null; then
  echo "check_format: no clang-format (tools/install-deps.sh installs it); skipped" >&2
  exit 77
fi
case "$("$tool" --version)" in
  *"version 14."*) ;;
  *) echo "check_format: warning: $("$tool" --version) is not clang-format 14; lines may break differently" >&2 ;;
esac

paths=("$@")
[ ${#paths[@]} -eq 0 ] && paths=(cli engine decoding frontend eval viewer common python tests fuzz tools)
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
  find "${paths[@]}" -path '*/third_party' -prune -o -type f \( -name '*.cpp' -o -name '*.h' \) -print0 | sort -z)

if [ $fix = 1 ]; then
  [ ${#files[@]} -eq 0 ] || printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$tool" -i --style=file
  exit 0
fi
# One clang-format per 50 files: --dry-run names each place that would change as
# "FILE:LINE:COL: error: code should be clang-formatted".
differ=$( ( [ ${#files[@]} -eq 0 ] || printf '%s\0' "${files[@]}" |
            xargs -0 -n 50 "$tool" --dry-run --Werror --style=file 2>&1 || true ) |
          sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$differ" ]; then
  echo "$differ"
  echo "check_format: $(echo "$differ" | wc -l) of ${#files[@]} files differ from .clang-format" \
       "($0 --fix [PATH...] reformats them)" >&2
  exit 1
fi
