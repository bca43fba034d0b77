#!/usr/bin/env bash
# One `vkspec bench` run as a Slurm job array of SHARDS tasks (one shard each, `--shard I/N`)
# and a merge job that starts when the array has ended, whether or not every task succeeded.
#
#   tools/slurm/submit.sh [--sbatch "ARGS"] OUT SHARDS -- BENCH OPTIONS...
#
# OUT (on a file system every node sees) receives job/ (what the tasks run: the vkspec binary,
# the shard count, the bench and report options), samples/ (every image's record, per run and
# shard: `bench --samples`), logs/, and from the merge report.txt, report.json and
# images_<run>.npz (the ADM evaluation suite's layout). --sbatch adds options to both sbatch calls
# (e.g. "--partition=gpu --gres=gpu:1 --time=4:00:00"). The binary is $VKSPEC, else `vkspec` on
# PATH, else this checkout's build/cli/vkspec. Prints the two job ids. The same command again
# resumes the run (finished shards take a second); other shards or options need another OUT.
# A failed task is run again, resuming, with
#   sbatch --array=I tools/slurm/bench_array.sbatch OUT   and then   sbatch tools/slurm/merge.sbatch OUT
set -euo pipefail
usage() { sed -n '2,15p' "$0" >&2; exit 2; }
sbatch_args=()
if [ "${1:-}" = "--sbatch" ]; then read -r -a sbatch_args <<< "${2:?}"; shift 2; fi
[ $# -ge 3 ] && [ "$3" = "--" ] || usage
out=$1 shards=$2
shift 3
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit: SHARDS must be a positive number, got '$shards'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
vkspec=${VKSPEC:-$(command -v vkspec || echo "$here/../../build/cli/vkspec")}
[ -x "$vkspec" ] || { echo "submit: $vkspec is not an executable vkspec (set VKSPEC or build: tools/build.sh)" >&2; exit 1; }
vkspec=$(cd "$(dirname "$vkspec")" && pwd)/$(basename "$vkspec")

# The tasks choose their seeds, samples folder and outputs; the merge takes the options that say
# which models and data judge the images (the report refuses the generation-only ones).
bench=() report=()
while [ $# -gt 0 ]; do
  opt=${1%%=*}
  case $opt in
    --shard|--samples|--report|--npz|--out-dir|--json)
      echo "submit: $opt is set by the Slurm scripts (OUT/samples, OUT/report.json, OUT/images_<run>.npz)" >&2; exit 2 ;;
  esac
  n=1  # words this option takes: 2 with a separate value
  [[ $1 == --*=* || $# -lt 2 || $2 == --* ]] || n=2
  bench+=("${@:1:n}")
  case $opt in
    --methods|--images|--seed|--sweep|--warmup|--profile|--batch) ;;
    *) report+=("${@:1:n}") ;;
  esac
  shift "$n"
done

mkdir -p "$out/samples" "$out/logs"
out=$(cd "$out" && pwd)
# Submitting the same run into OUT again resumes it; another run (other shards or options) would
# mix its seeds with this one's, so it needs its own OUT.
job=$(mktemp -d "$out/.job.XXXXXX")
printf '%s\n' "$vkspec" > "$job/vkspec"
printf '%s\n' "$shards" > "$job/shards"
printf '%s\0' "${bench[@]}" > "$job/bench_args"
printf '%s\0' ${report[@]+"${report[@]}"} > "$job/report_args"
if [ -d "$out/job" ]; then
  for f in shards bench_args; do
    cmp -s "$job/$f" "$out/job/$f" || {
      rm -r "$job"
      echo "submit: $out holds another run (job/$f differs: $(tr '\0' ' ' < "$out/job/$f")); use another OUT" >&2
      exit 2
    }
  done
  rm -r "$out/job"
fi
mv "$job" "$out/job"
array=$(sbatch --parsable ${sbatch_args[@]+"${sbatch_args[@]}"} --array="0-$((shards - 1))" \
  --output="$out/logs/slurm_%A_%a.out" "$here/bench_array.sbatch" "$out")
array=${array%%;*}
merge=$(sbatch --parsable ${sbatch_args[@]+"${sbatch_args[@]}"} --dependency="afterany:$array" \
  --output="$out/logs/slurm_%j_merge.out" "$here/merge.sbatch" "$out")
merge=${merge%%;*}
echo "$array $merge"
echo "submit: array job $array (${shards} shards), merge job $merge; results in $out" >&2
