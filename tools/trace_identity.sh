#!/usr/bin/env bash
# Behaviour check for refactors: runs every method and a set of option variants with one vkspec
# binary and writes their traces to DIR; with --compare DIR_A DIR_B, says whether the traces of
# two such runs match (tokens, events, forwards) ignoring timings.
#   tools/trace_identity.sh BINARY DIR     # e.g. a copy of the binary before the change
#   tools/trace_identity.sh --compare DIR_A DIR_B
set -euo pipefail
if [[ ${1:-} == --compare ]]; then
  exec python3 - "$2" "$3" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
def load(p):
    j = json.load(open(p))
    # Model files are compared by name: a binary built in another checkout (a worktree of the
    # commit before the change) finds the same assets under its own source path.
    def strip(x):
        if isinstance(x, dict):
            return {k: os.path.basename(v) if k == "model" and isinstance(v, str) else strip(v)
                    for k, v in x.items() if k not in ("wall_ms", "device_ms", "busy_ms", "time_ms", "date", "elapsed_ms")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(j)
names = sorted(f for f in os.listdir(a) if f.endswith(".json"))
bad = 0
for f in names:
    if not os.path.exists(os.path.join(b, f)):
        print("missing", f); bad += 1; continue
    same = load(os.path.join(a, f)) == load(os.path.join(b, f))
    print(("same     " if same else "DIFFERENT"), f)
    bad += not same
print(f"{len(names) - bad}/{len(names)} traces identical")
sys.exit(1 if bad else 0)
PY
fi
bin=$1 dir=$2
mkdir -p "$dir"
run() {  # name, then generate options
  local name=$1; shift
  "$bin" generate --images 2 --seed 7 --class 3 --out "$dir/$name.png" --trace "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1 ||
    { echo "FAILED $name"; cat "$dir/$name.log"; }
}
run ar --method ar
run ar_nocfg --method ar --cfg 1
run ar_topk --method ar --top-k 50 --top-p 0.9 --temperature 0.8
run sjd --method sjd
run sjd_random --method sjd --init random --window 8
run scd-mc --method scd-mc
run scd-mc_nocfg --method scd-mc --cfg 1
run scd-mc_heads --method scd-mc --init heads --window 32
run scd-mc_lantern --method scd-mc --accept lantern --k 16 --delta 0.05
run scd-gs --method scd-gs --init left
run sd --method sd
run sd_lantern --method sd --accept lantern --k 8 --delta 0.1 --window 3
run lantern --method lantern
run lantern_model --method lantern --drafter model --k 16
run zipar --method zipar
run zipar_w3 --method zipar --window 3
run zipar_exact --method zipar --verify exact
run zipar_lantern --method zipar --verify lantern --k 16 --delta 0.1
run mulo --method mulo
run mulo_coupled --method mulo --resample coupled
run mulo_tau --method mulo --tau 0.5 --radius 2 --band 2
run mulo_pixel_sr --method mulo --upsampler pixel-sr
run mulo_latent --method mulo --upsampler latent --band 2
run hawk --method hawk
run hawk_d2 --method hawk --depth 2
run hawk_chain --method hawk --tree chain
run hawk_nodes40 --method hawk --nodes 40
run hawk_horizontal --method hawk --directions horizontal
run hawk_vertical_chain --method hawk --directions vertical --tree chain
run ssd --method ssd
run ssd_token --method ssd --head-kind token
run ssd_coupled --method ssd-coupled
run ssd_coupled_r1 --method ssd-coupled --rows 1 --rounds 2
run eagle --method eagle
run eagle_static --method eagle --tree static
run eagle_sampled --method eagle --tree static --candidates sampled
run lantern_eagle --method lantern --drafter eagle
run lantern_pp --method lantern++
run sjd-pac --method sjd-pac
run sjd-pac_longest --method sjd-pac --path longest --init above
run pjd --method pjd
run sjd_gsd --method sjd --accept gsd
run scd-mc_entropy --method scd-mc --entropy-temperature
