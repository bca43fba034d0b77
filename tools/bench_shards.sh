#!/usr/bin/env bash
# One long `vkspec bench` evaluation as chunks of seeds spread over several processes, each chunk
# kept in DIR (`bench --samples`): interrupt it at any time and run the same command again to go
# on where it stopped (finished chunks take a second, a half-done one resumes at its next image).
# At the end, `vkspec bench --report DIR` prints the merged table.
#
#   tools/bench_shards.sh DIR IMAGES [--chunk C] [--jobs J] [--first S] -- BENCH OPTIONS...
#
# Chunk k covers seeds S + k*C .. S + (k+1)*C - 1; process j runs chunks j, j+J, j+2J, ... so at
# any moment every method has about the same number of images. On a CPU device one bench process
# keeps about one core busy: J = the number of cores. Each process runs under `nice -n 10`.
# VKSPEC=path/to/vkspec overrides the binary (default: build/cli/vkspec). Logs go to
# DIR/logs/<bench options>/, so several evaluations can share DIR at the same time.
set -euo pipefail
usage() { sed -n '2,13p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
dir=$1 images=$2
shift 2
chunk=50 jobs=$(nproc) first=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --chunk) chunk=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ "${1:-}" = "--" ] || usage
shift
root=$(cd "$(dirname "$0")/.." && pwd)
vkspec=${VKSPEC:-$root/build/cli/vkspec}
[ -x "$vkspec" ] || { echo "bench_shards: $vkspec not built (tools/build.sh)" >&2; exit 1; }
logs=$dir/logs/$(printf '%s_' "$@" | tr -c 'A-Za-z0-9=.,+-' '_' | sed 's/__*/_/g; s/^_//; s/_$//')
mkdir -p "$logs"
chunks=$(( (images + chunk - 1) / chunk ))
worker() {
  local j=$1 k n
  shift
  for (( k = j; k < chunks; k += jobs )); do
    n=$(( images - k * chunk < chunk ? images - k * chunk : chunk ))
    nice -n 10 "$vkspec" bench "$@" --images "$n" --seed $(( first + k * chunk )) --warmup 0 --samples "$dir" \
      > "$logs/chunk$k.txt" 2>> "$logs/worker$j.log" || { echo "bench_shards: chunk $k failed, see $logs/worker$j.log" >&2; return 1; }
    echo "$(date -u +%FT%TZ) chunk $k done (seeds $(( first + k * chunk ))+$n)" >> "$logs/worker$j.log"
  done
}
pids=()
for (( j = 0; j < jobs; ++j )); do worker "$j" "$@" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
"$vkspec" bench --report "$dir"
exit $status
