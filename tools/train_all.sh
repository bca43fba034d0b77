#!/usr/bin/env bash
# Trains every shipped model in order; each stage is skipped when its output exists and resumes
# from train_runs/<name>/ckpt.pt otherwise, so this is safe to start again after being killed:
#   (from the repository root) setsid nohup tools/train_all.sh > /dev/null 2>&1 < /dev/null &
# Progress: train_runs/train_all.log (stage lines) and train_runs/<name>/train.log (per step).
# The body is a function so bash has parsed all of it before running: editing this file while
# a run is in progress does not affect that run.
main() {
  set -euo pipefail
  cd "$(dirname "$0")/.."
  mkdir -p train_runs
  exec 9> train_runs/train_all.lock
  if ! flock -n 9; then echo "train_all.sh: another instance is running" >&2; exit 0; fi
  exec >> train_runs/train_all.log 2>&1
  # PASSIVE: at nice 10 on a busy machine, spinning OpenMP threads wasted ~3x CPU per step
  export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE PYTHONUNBUFFERED=1
  local py="nice -n 10 /usr/bin/python3"
  log() { echo "$(date '+%F %T') train_all: $*"; }

  stage() {  # stage <output file that marks it done> <script> [args...]
    local out=$1; shift
    if [ -f "$out" ]; then log "skip $1 ($out exists)"; return; fi
    log "start $*"
    local t0=$SECONDS
    $py tools/"$@" > /dev/null  # per-step lines go to the stage's own train.log
    log "done $1 in $(( (SECONDS - t0) / 60 )) min"
  }

  log "=== train_all.sh start (pid $$) ==="
  stage assets/fmnist_vq.safetensors          train_tokenizer.py
  stage train_runs/tokens_8_test.npy          encode_dataset.py
  stage assets/fmnist_classifier.safetensors  train_classifier.py
  stage assets/fmnist_gpt16.safetensors       train_gpt.py --preset gpt16
  stage assets/fmnist_gpt16_heads.safetensors train_draft_heads.py
  # SSD latent heads: self-distillation set (one thread: sampling with two on a busy machine
  # was 8x slower), then the heads
  OMP_NUM_THREADS=1 stage train_runs/ssd_distill/test_00009.npz  ssd_distill_set.py --split test --images 500
  OMP_NUM_THREADS=1 stage train_runs/ssd_distill/train_00059.npz ssd_distill_set.py --split train --images 3000
  OMP_NUM_THREADS=1 stage assets/fmnist_gpt16_latent_heads.safetensors train_ssd_latent_heads.py
  # LANTERN's EAGLE-style drafter on the same self-distillation set
  OMP_NUM_THREADS=1 stage assets/fmnist_eagle_drafter16.safetensors train_eagle_drafter.py --budget-min 50 --wall-cap-min 70
  stage assets/fmnist_drafter16.safetensors   train_gpt.py --preset drafter16
  stage assets/fmnist_gpt8.safetensors        train_gpt.py --preset gpt8
  # MuLo-SD r = 4 (issue 18): 4x4 tokens of 8x8-pooled images, then its low-resolution model
  stage train_runs/tokens_4_test.npy          encode_dataset.py --grids 4
  stage assets/fmnist_gpt4.safetensors        train_gpt.py --preset gpt4
  # MuLo-SD's upsamplers: the pixel super-resolution nets (x2, x4) and the latent upsamplers
  OMP_NUM_THREADS=1 stage assets/fmnist_sr2.safetensors        train_sr_net.py --scale 2
  OMP_NUM_THREADS=1 stage assets/fmnist_sr4.safetensors        train_sr_net.py --scale 4 --steps 4000
  OMP_NUM_THREADS=1 stage assets/fmnist_latent_up2.safetensors train_latent_upsampler.py --ratio 2
  OMP_NUM_THREADS=1 stage assets/fmnist_latent_up4.safetensors train_latent_upsampler.py --ratio 4
  # the prompt-driven model: tiny Janus-Pro on captions (own BPE tokenizer), converted with
  # convert_janus.py; the converted safetensors is written last and marks the stage done
  OMP_NUM_THREADS=1 stage assets/fmnist_janus.safetensors train_janus.py
  # its draft heads, logits through its gen_head, captions of each image's class as prompts
  OMP_NUM_THREADS=1 stage assets/fmnist_janus_heads.safetensors train_draft_heads.py --base fmnist_janus \
    --name fmnist_janus_heads --budget-min 30 --wall-cap-min 70
  log "=== all stages done ==="
}
main "$@"; exit
