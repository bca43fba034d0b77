#!/usr/bin/env bash
# The GPU performance run in one command (docs/perf.md, "On a GPU"): on the default Vulkan device
# (VKSPEC_DEVICE to choose), most important first, so that a run cut short by a device lease still
# brings back what matters: the capability record, the op checks at this device's subgroup width
# (lavapipe cannot test 32 or 64), every method on the shipped model in wall-clock against ar in
# the same run, a per-kernel profile of ar and six methods, the EAGLE chains, `vkspec bench
# --synthetic` for LlamaGen-B/L/XL next to tools/torch_bench.py on the same GPU (ratio printed),
# the op benchmarks, then the 24x24 grids.
# Everything lands in OUT (default docs/bench/gpu), .txt and .json per step.
#
#   tools/gpu_bench.sh [OUT]   PYTHON=python3 with CUDA PyTorch; REPEAT=20; SHAPES="B L XL";
#                              JANUS_SHAPES="janus-pro-1b janus-pro-7b" (bench --synthetic, 24x24);
#                              LUMINA_SHAPES="lumina-mgpt-7b-768 lumina-mgpt-7b-512" (their grids,
#                              windows up to SCD's 64, line breaks placed);
#                              GRIDS="16 24"; IMAGES=20 per method; COMPILE_SHAPES="B" (eager and
#                              torch.compile, at the first grid, last: it compiles once per window;
#                              empty: none); TORCH=0 leaves PyTorch out; OPS=0 the op benchmarks;
#                              SWEEPS=1 adds bench-ops' kernel-variant grids (attention-sweep,
#                              matmul-sweep, conv2d-sweep) after the EAGLE chains; STEP_TIMEOUT=0
#                              seconds per step (0: none; a step that runs out is named and
#                              skipped); DEADLINE=0 seconds after which the remaining steps are
#                              skipped (0: none; with STEP_TIMEOUT the run ends by their sum, so
#                              a lease's time limit never kills it before its files are packed);
#                              GEMV_ROWS="24 40 72" repeats the synthetic forwards with each
#                              VKSPEC_GEMV_MAX_ROWS (the GEMV / tiled-matmul crossover in whole
#                              forwards; empty: the device's table only);
#                              ROWS_TILES="0 8,4 4,8" repeats them with each
#                              VKSPEC_GEMV_ROWS_TILE (the row-block GEMV's shape; 0: the plain
#                              GEMV at every row count; empty: the table's only);
#                              NOFOLDS=1 repeats them with VKSPEC_DISABLE_MATMUL_FOLDS=1 (each
#                              norm, gate and residual add on a dispatch of its own: what folding
#                              them into the projections saves)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${VKSPEC_BUILD_DIR:-build}
out=${1:-docs/bench/gpu}
python=${PYTHON:-python3}
repeat=${REPEAT:-20}
shapes=${SHAPES:-B L XL}
janus_shapes=${JANUS_SHAPES-janus-pro-1b janus-pro-7b}
lumina_shapes=${LUMINA_SHAPES-lumina-mgpt-7b-768 lumina-mgpt-7b-512}
grids=${GRIDS:-16 24}
images=${IMAGES:-20}
compile_shapes=${COMPILE_SHAPES-B}
torch=${TORCH:-1}
ops=${OPS:-1}
sweeps=${SWEEPS:-0}
gemv_rows=${GEMV_ROWS:-}
rows_tiles=${ROWS_TILES:-}
nofolds=${NOFOLDS:-0}
step_timeout=${STEP_TIMEOUT:-0}
deadline=${DEADLINE:-0}
vkspec="$build/cli/vkspec"
[ -x "$vkspec" ] || tools/build.sh || exit 1
mkdir -p "$out"
failed=()
skipped=()

# step NAME CMD...: runs CMD with its output in OUT/NAME.txt; a failure or timeout is recorded and
# the run goes on, so one broken step never loses the others' numbers.
step() {
  local name=$1
  shift
  if [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
    echo "== $name: skipped, past DEADLINE=$deadline s" | tee "$out/$name.txt"
    skipped+=("$name")
    return
  fi
  echo "== $name: $*" | tee "$out/$name.txt"
  local t0=$SECONDS rc=0
  if [ "$step_timeout" -gt 0 ]; then
    timeout --kill-after=5 "$step_timeout" "$@" 2>&1 | tee -a "$out/$name.txt"
  else
    "$@" 2>&1 | tee -a "$out/$name.txt"
  fi
  rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.txt"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

step devices "$vkspec" devices
step selftest "$vkspec" selftest --json "$out/selftest.json"  # for docs/devices/
# The cooperative-matrix matmul through VK_KHR_cooperative_matrix (engine/vk/coopmat_khr.h: the NV
# kernel's SPIR-V rewritten; it has run on no device yet): on a device with both extensions the
# default is NV, so this forces KHR. Its coopmat cases must pass before KHR becomes the default.
step coopmat_khr env VKSPEC_COOPMAT_KHR=1 "$vkspec" selftest --op matmul
# eagle's tree grows on the device (issue 34 item 6): its row of "per target forward: transfers,
# submits" in methods.txt should read 1 submit (was 2 + levels, 6.9 on the H200 of 2026-11-27).
step methods "$vkspec" bench --methods ar,sjd,scd-mc,scd-gs,sd,hawk,ssd,eagle,lantern,zipar,mulo \
  --images "$images" --classifier none --json "$out/methods.json"
# Issue 32's methods: SJD-PAC, PJD, LANTERN++ and GSD's rule on the window methods, against ar.
step new_methods "$vkspec" bench --methods ar,sjd,scd-mc,sjd-pac,pjd,lantern,lantern++ --sweep accept=exact,gsd \
  --images "$images" --classifier none --json "$out/new_methods.json"
# The lossy frontier in wall-clock: PJD's staircase with every row resolving (ours; 31 forwards at
# lag 1) and scd-mc under LANTERN++'s lambda, the best lossy setting on lavapipe (docs/perf.md).
step lossy_frontier "$vkspec" bench --methods ar,pjd --lower-rows resolve --window 16 --sweep lag=1,2,4 \
  --images "$images" --classifier none --json "$out/lossy_pjd.json"
step lossy_lambda "$vkspec" bench --methods ar,scd-mc --accept lantern --lambda 5 --k 11 --window 32 \
  --images "$images" --classifier none --json "$out/lossy_lambda.json"
# Many images per forward (issue 34): images/s at each batch size, ar against the batched window
# methods, sjd-pac, zipar and eagle (continuous batching; eagle's drafter runs lane by lane):
# where the crossovers with ar lie on a GPU; and the batch-invariant kernels' cost (the plain
# GEMV past 8 rows; VKSPEC_GEMV_ROWS_TILE cannot apply under --batch).
step batch_sweep "$vkspec" bench --methods ar,scd-mc,sjd,sjd-pac,zipar,eagle --sweep batch=1,8,32 \
  --images 64 --classifier none --json "$out/batch_sweep.json"
# Whether a batch gives each image the tokens it gets alone with this GPU's kernels (docs/methods.md,
# "Several images per forward": a lane padded past the GEMV's row limit rounds differently):
# 8 images at --batch 4 and at --batch 1, then the images whose tokens differ.
for m in scd-mc eagle; do
  for b in 1 4; do
    step "batch_bits_${m}_b$b" "$vkspec" generate --method "$m" --images 8 --seed 11 --batch "$b" \
      --out "$out/batch_bits_${m}_b$b.png" --trace "$out/batch_bits_${m}_b$b.json"
  done
  step "batch_bits_$m" "$python" -c 'import json, sys
def tokens(p): return [(i["seed"], i["tokens"]) for i in json.load(open(p))["images"]]
a, b = tokens(sys.argv[1]), tokens(sys.argv[2])
print(sys.argv[3], "images whose tokens differ at --batch 4:", sum(x != y for x, y in zip(a, b)), "of", len(a))' \
    "$out/batch_bits_${m}_b1.json" "$out/batch_bits_${m}_b4.json" "$m"
done
# ar without the host's round trip per token against the methods that beat ar with it.
step ar_pipelined "$vkspec" bench --methods ar,scd-mc,scd-gs,sjd --sweep tokens-per-submit=1,16 \
  --images "$images" --classifier none --json "$out/ar_pipelined.json"
step profile "$vkspec" bench --methods ar,sjd,scd-mc,sd,hawk,ssd,mulo --images 4 --classifier none --profile \
  --json "$out/profile.json"
step eagle_chains "$vkspec" bench --methods ar,eagle --tree chain --candidates sampled \
  --sweep depth=2,3,4,6 --images "$images" --classifier none --json "$out/eagle_chains.json"
# Issue 48: adaptive-tree against eagle's fixed tree (lossless: the wall-clock of smaller trees
# against more forwards), vvs against lantern on the same EAGLE drafter (skipped verifications),
# and flashar's 31 diagonal forwards (does a 16-query forward cost about one AR step on a GPU?).
step issue48 "$vkspec" bench --methods ar,eagle,adaptive-tree,lantern,vvs,flashar --drafter eagle \
  --images "$images" --classifier none --json "$out/issue48.json"
if [ "$sweeps" = 1 ]; then
  for op in attention-sweep matmul-sweep conv2d-sweep; do
    step "$op" "$vkspec" bench-ops --op "$op" --repeat "$repeat" --json "$out/$op.json"
  done
fi
step window_sweep "$vkspec" bench --methods ar,sjd,scd-mc --sweep window=16,32,64 --images "$images" \
  --classifier none --json "$out/window_sweep.json"
# Janus-Pro's shapes (issue: the 7B AR step's share of HBM bandwidth, the window-16 forward against
# an AR step); their own 24x24 grid; the KV cache half filled after 256 prompt positions.
for shape in $janus_shapes; do
  step "vkspec_$shape" "$vkspec" bench --synthetic "$shape" --repeat "$repeat" --windows 1,4,16,32 \
    --json "$out/vkspec_$shape.json"
done
# flan-t5-xl's encoder on a 120-token prompt (issue 47: LlamaGen text-to-image's condition).
step t5_encoder "$vkspec" bench-text-encoder --synthetic flan-t5-xl --tokens 120 --repeat "$repeat" \
  --json "$out/t5_encoder.json"
# Lumina-mGPT-7B (issue 49: the AR step's share of HBM bandwidth, and SCD's window-64 forward
# against an AR step, the ratio that decides its 4.21x in wall-clock), 320 prompt positions.
for shape in $lumina_shapes; do
  step "vkspec_$shape" "$vkspec" bench --synthetic "$shape" --repeat "$repeat" --windows 1,16,32,64 \
    --json "$out/vkspec_$shape.json"
done
for grid in $grids; do
  for shape in $shapes; do
    name="${shape}_${grid}"
    step "vkspec_$name" "$vkspec" bench --synthetic "$shape" --grid "$grid" --repeat "$repeat" \
      --json "$out/vkspec_$name.json"
    for rows in $gemv_rows; do
      step "vkspec_${name}_gemv$rows" env VKSPEC_GEMV_MAX_ROWS="$rows" "$vkspec" bench --synthetic "$shape" \
        --grid "$grid" --repeat "$repeat" --windows 1,16,32 --json "$out/vkspec_${name}_gemv$rows.json"
    done
    for tile in $rows_tiles; do
      tag=rows${tile//,/x}
      step "vkspec_${name}_$tag" env VKSPEC_GEMV_ROWS_TILE="$tile" "$vkspec" bench --synthetic "$shape" \
        --grid "$grid" --repeat "$repeat" --windows 1,8,16,32 --json "$out/vkspec_${name}_$tag.json"
    done
    [ "$nofolds" = 1 ] && step "vkspec_${name}_nofolds" env VKSPEC_DISABLE_MATMUL_FOLDS=1 "$vkspec" bench \
      --synthetic "$shape" --grid "$grid" --repeat "$repeat" --windows 1,16,32 --json "$out/vkspec_${name}_nofolds.json"
    # A failing PyTorch (no CUDA build, out of memory) must not lose the vkspec numbers.
    [ "$torch" = 1 ] && step "torch_$name" "$python" tools/torch_bench.py --shape "$shape" --grid "$grid" --repeat "$repeat" \
      --no-compile --compare "$out/vkspec_$name.json" --json "$out/torch_$name.json"
  done
  if [ "$ops" = 1 ] && [ -z "${ops_done:-}" ]; then
    step ops "$vkspec" bench-ops --repeat "$repeat" --json "$out/ops.json"
    ops_done=1
  fi
done
# Last, since torch.compile compiles once per window size (minutes per shape).
first_grid=${grids%% *}
[ "$torch" = 1 ] || compile_shapes=
for shape in $compile_shapes; do
  name="${shape}_${first_grid}"
  step "torch_compiled_$name" "$python" tools/torch_bench.py --shape "$shape" --grid "$first_grid" \
    --repeat "$repeat" --compare "$out/vkspec_$name.json" --json "$out/torch_compiled_$name.json"
done
[ ${#skipped[@]} -gt 0 ] && printf 'gpu_bench: skipped past the deadline: %s\n' "${skipped[*]}" | tee "$out/skipped.txt"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'gpu_bench: failed: %s\n' "${failed[@]}" | tee "$out/failed.txt"
  exit 1
fi
