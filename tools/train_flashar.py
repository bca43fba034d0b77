"""FlashAR post-training (Zhou et al., arXiv 2605.09430; issue #48) of the shipped fmnist_gpt16.

The model (tools/flashar_model.py `FlashAR`): the target's own backbone and LM head (horizontal
head H: (r,c) -> (r,c+1)), one vertical block beside the last backbone layer with its own norm and
head (V: (r,c) -> (r+1,c)), a diagonal attention mask (a cell sees the prefix and every cell on
its own or an earlier anti-diagonal) and a logit gate mixing H(r,c-1) and V(r-1,c) for target
(r,c). Decoding emits one anti-diagonal per forward: 31 forwards for 16x16 instead of 256.

Training (paper Eq. 5 as the summary gives it, shared/papers/flashar.txt section 3):
    L = CE(fused, x) + 0.05 CE(H alone, x) + 0.05 CE(V alone, x)
        + 0.2 * T^2 * KL(teacher(r+1,c) || V(r,c)) at T = 2
  teacher = the original fmnist_gpt16 run raster-causally with its own head: its distribution of
  cell (r+1,c) given the raster prefix up to (r+1,c)-1; no grad. Class dropout 0.1 to the null
  class (the teacher sees the same labels), so CFG works. Two stages over one schedule: stage 1
  (the first --stage1-frac of progress) freezes the backbone and trains the vertical branch, its
  head and the gate; stage 2 fine-tunes everything, the backbone at --backbone-lr-mult x the lr
  (ramped in over the first 5 % of stage 2, as its Adam moments start empty). AdamW (0.9, 0.95),
  weight decay 0.05 on matrices, gradient-norm clip 1.0, warmup + cosine (common.lr_at).
  Resumable (common.Run, compute budget); --max-wall-min stops an invocation (rerun to continue).

Evaluation for the card (CPU, cheap): fused cross-entropy of the diagonal factorisation on the
first --eval-images test images next to the original model's raster cross-entropy on the same
images; the mean gate; --eval-samples samples (balanced classes, the card sampler cfg 2.0,
temperature 1, no top-k) by `generate_diagonal`, class accuracy by the shipped classifier with a
95 % Wilson interval and FID in its feature space; the same for the original model's raster
samples (GPT.generate) and for diagonal decoding of the original model without training (the
untrained branch: a copy of the last layer and of the LM head, gate 0.5). Those two baselines do
not depend on training and are cached in train_runs/<run>/baselines.json (--baselines-only).
"""
import argparse
import json
import os
import time

import torch
import torch.nn.functional as F

import common as C
import fid
from encode_dataset import load_vq
from flashar_conditions import conditions_for
from flashar_model import generate_diagonal, load_flashar
from safetensors_io import load_file
from ssd_distill_set import sampler_from_meta
from train_gpt import load_tokens
from vkspec_models import Classifier


# ----------------------------------------------------------------------------------------------
# loss
# ----------------------------------------------------------------------------------------------
def ce(logits, target):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def losses(model, conds, tok, cond, args, backbone_grad=True):
    """Returns (total, parts dict of floats). cond: (condition, emb_mask) as conds.train gives it,
    already dropped to the null condition where wanted (the teacher sees the same)."""
    W, N = model.cfg.grid_size, model.cfg.block_size
    h, v = model(tok, cond[0], backbone_grad=backbone_grad, emb_mask=cond[1])
    fused, hs, vs, g, kind = model.fuse(h, v)
    l_fuse = ce(fused, tok)
    hm, vm = kind != 2, kind != 1  # targets H / V can predict (both include the corner)
    l_h = ce(hs[:, hm], tok[:, hm])
    l_v = ce(vs[:, vm], tok[:, vm])
    total = l_fuse + args.aux_h * l_h + args.aux_v * l_v
    l_kd = torch.zeros(())
    if args.kd_weight > 0:
        with torch.no_grad():
            t_logits = conds.teacher_logits(cond[0], cond[1], tok)  # [B, N, vocab]: m predicts raster cell m
            t_logp = F.log_softmax(t_logits[:, W:] / args.kd_temp, -1)  # cells (r+1, c), r < H-1
        P = model.cfg.cls_token_num
        s_logp = F.log_softmax(v[:, P:P + N - W] / args.kd_temp, -1)    # V at cells (r, c), r < H-1
        l_kd = (t_logp.exp() * (t_logp - s_logp)).sum(-1).mean() * args.kd_temp ** 2
        total = total + args.kd_weight * l_kd
    inner = kind == 3
    return total, dict(loss=total.item(), fuse=l_fuse.item(), h=l_h.item(), v=l_v.item(), kd=l_kd.item(),
                       gate=g[:, inner].mean().item())


@torch.no_grad()
def diag_ce(model, conds, tok, lab, bs=50):
    """Per-token cross-entropy (nats) of the fused diagonal factorisation, H alone on the targets
    it can predict, V alone likewise, and the mean gate on interior cells and at the corner; the
    conditions are conds.eval's (held-out prompts for a prompt model)."""
    model.eval()
    s = dict(fuse=0.0, h=0.0, v=0.0, gate=0.0, corner_gate=0.0)
    nh = nv = ng = 0
    for i in range(0, len(tok), bs):
        t = tok[i:i + bs]
        cond, mask = conds.eval(lab[i:i + bs], offset=i)
        fused, hs, vs, g, kind = model.fuse(*model(t, cond, emb_mask=mask))
        hm, vm = kind != 2, kind != 1
        s["fuse"] += F.cross_entropy(fused.flatten(0, 1), t.flatten(), reduction="sum").item()
        s["h"] += F.cross_entropy(hs[:, hm].flatten(0, 1), t[:, hm].flatten(), reduction="sum").item()
        s["v"] += F.cross_entropy(vs[:, vm].flatten(0, 1), t[:, vm].flatten(), reduction="sum").item()
        s["gate"] += g[:, kind == 3].sum().item()
        s["corner_gate"] += g[:, 0].sum().item()
        nh += int(hm.sum()) * len(t)
        nv += int(vm.sum()) * len(t)
        ng += int((kind == 3).sum()) * len(t)
    n = len(tok)
    return dict(fuse=s["fuse"] / (n * tok.shape[1]), h=s["h"] / nh, v=s["v"] / nv, gate=s["gate"] / ng,
                corner_gate=s["corner_gate"] / n)


@torch.no_grad()
def raster_ce(conds, tok, lab, bs=50):
    tot = 0.0
    for i in range(0, len(tok), bs):
        cond, mask = conds.eval(lab[i:i + bs], offset=i)
        logits = conds.teacher_logits(cond, mask, tok[i:i + bs])
        tot += F.cross_entropy(logits.flatten(0, 1), tok[i:i + bs].flatten(), reduction="sum").item()
    return tot / (len(tok) * tok.shape[1])


# ----------------------------------------------------------------------------------------------
# samples
# ----------------------------------------------------------------------------------------------
class Scorer:
    def __init__(self, assets, runs):
        self.vq = load_vq(os.path.join(assets, "fmnist_vq.safetensors"))
        self.clf = Classifier()
        self.clf.load_state_dict(load_file(os.path.join(assets, "fmnist_classifier.safetensors"))[0])
        self.clf.eval()
        stats = os.path.join(runs, "fid_stats_32.npz")
        if not os.path.exists(stats):
            fid.write_reference_stats(self.clf, 32, stats)
        self.ref = fid.load_stats(stats)

    @torch.no_grad()
    def images(self, tok, W):
        return torch.cat([self.vq.decode_code(tok[i:i + 100].view(-1, W, W)).clamp(-1, 1)
                          for i in range(0, len(tok), 100)])

    @torch.no_grad()
    def score(self, x, labels):
        k = int((self.clf(x).argmax(-1) == labels).sum())
        lo, hi = C.wilson(k, len(labels))
        f = fid.frechet(*fid.stats(fid.features(self.clf, x)), *self.ref)
        return dict(accuracy=k / len(labels), correct=k, n=len(labels), lo=lo, hi=hi, fid=f)


@torch.no_grad()
def sample_tokens(kind, model, conds, labels, samp, seed, bs=100):
    """kind 'raster' (the base, conds.raster_tokens) or 'diagonal' (a FlashAR, generate_diagonal)
    under conds.eval's conditions of `labels`; one generator seeded `seed` for the whole set,
    batches of bs in label order."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(0, len(labels), bs):
        lb = labels[i:i + bs]
        if kind == "raster":
            out.append(conds.raster_tokens(lb, samp, g, offset=i))
        else:
            cond, mask = conds.eval(lb, offset=i)
            out.append(generate_diagonal(model, cond, samp["cfg_scale"], samp["temperature"], samp["top_k"],
                                         samp["top_p"], generator=g, emb_mask=mask))
    return torch.cat(out)


def sample_eval(kind, model, conds, scorer, n, samp, seed, log, tag):
    labels = torch.arange(n) % 10
    t0 = time.time()
    tok = sample_tokens(kind, model, conds, labels, samp, seed)
    secs = time.time() - t0
    r = scorer.score(scorer.images(tok, int(round(tok.shape[1] ** 0.5))), labels)
    r["seconds"] = secs
    log(f"{tag}: class accuracy {r['accuracy']:.3f} ({r['correct']}/{r['n']}, 95% {r['lo']:.3f}-{r['hi']:.3f}) "
        f"FID {r['fid']:.2f} ({secs:.0f} s sampling, seed {seed})")
    return r


def baselines(args, conds, tok_ev, lab_ev, samp, scorer, log):
    """The original model raster and the untrained FlashAR diagonally; cached by their settings."""
    path = os.path.join(args.run_dir_resolved, "baselines.json")
    key = (f"{args.base} images {len(tok_ev)} samples {args.eval_samples} seed {args.eval_seed} "
           f"cfg {samp['cfg_scale']} T {samp['temperature']} k {samp['top_k']} p {samp['top_p']} "
           f"V {args.vertical_layers}")
    cache = {}
    if os.path.exists(path):
        with open(path) as f:
            cache = json.load(f)
    if key in cache:
        return cache[key]
    r = {}
    r["raster_ce"] = raster_ce(conds, tok_ev, lab_ev)
    log(f"baseline: {args.base} raster CE {r['raster_ce']:.4f} on {len(tok_ev)} test images")
    untrained = conds.make_flashar(args.vertical_layers).eval()
    r["untrained"] = diag_ce(untrained, conds, tok_ev, lab_ev)
    log(f"baseline: untrained diagonal CE {json.dumps(r['untrained'])}")
    r["untrained_samples"] = sample_eval("diagonal", untrained, conds, scorer, args.eval_samples, samp,
                                         args.eval_seed, log, "baseline: untrained diagonal samples")
    r["raster_samples"] = sample_eval("raster", None, conds, scorer, args.eval_samples, samp, args.eval_seed, log,
                                      f"baseline: {args.base} raster samples")
    cache = {}
    if os.path.exists(path):  # another process may have written meanwhile
        with open(path) as f:
            cache = json.load(f)
    cache[key] = r
    tmp = path + f".{os.getpid()}.tmp"
    C.json_dump(tmp, cache)
    os.replace(tmp, path)
    return r


# ----------------------------------------------------------------------------------------------
# export and card
# ----------------------------------------------------------------------------------------------
def export(args, run, conds, model, tok_ev, lab_ev, samp, out_prefix):
    log = run.log
    scorer = Scorer(args.assets_dir, C.RUNS)
    bl = baselines(args, conds, tok_ev, lab_ev, samp, scorer, log)
    model.eval()
    ev = diag_ce(model, conds, tok_ev, lab_ev)
    log(f"trained diagonal CE {json.dumps(ev)} ({len(tok_ev)} test images)")
    sm = sample_eval("diagonal", model, conds, scorer, args.eval_samples, samp, args.eval_seed, log,
                     "trained diagonal samples")
    os.makedirs(os.path.dirname(os.path.abspath(out_prefix)), exist_ok=True)
    tmp = out_prefix + ".f16check.safetensors"
    extra = {"base": args.base, "cfg": str(samp["cfg_scale"]), "temperature": str(samp["temperature"]),
             "top_k": str(samp["top_k"]), "top_p": str(samp["top_p"]),
             "val_loss": f"{ev['fuse']:.4f}", "flashar.decode_steps": str(2 * model.cfg.grid_size - 1)}
    meta = conds.save(model, tmp, extra)
    m16, _ = load_flashar(tmp)
    n16 = min(200, len(tok_ev))
    e16 = diag_ce(m16, conds, tok_ev[:n16], lab_ev[:n16])
    e32 = diag_ce(model, conds, tok_ev[:n16], lab_ev[:n16])
    f16_note = f"f16 file vs f32 weights, fused CE on {n16} test images: {e16['fuse']:.4f} vs {e32['fuse']:.4f}"
    log(f16_note)
    # samples PNG: one column per class, 8 each, seed 2 (as fmnist_gpt16's)
    labels = torch.arange(10).repeat_interleave(8)
    x = scorer.images(sample_tokens("diagonal", model, conds, labels, samp, seed=2), model.cfg.grid_size)
    imgs = C.from_unit(x[:, 0]).reshape(10, 8, *x.shape[2:]).transpose(1, 0, 2, 3).reshape(80, *x.shape[2:])
    C.write_png(out_prefix + "_samples.png", C.grid_image(imgs, 10, scale=2))
    name = os.path.basename(out_prefix)
    C.write_card(out_prefix + ".md", f"{name}: FlashAR post-training of {args.base} (diagonal decoding)",
                 card_sections(args, run, model, conds.card, samp, (bl, ev, sm, f16_note), meta, len(tok_ev), name))
    os.replace(tmp, out_prefix + ".safetensors")  # last: marks the export done
    log(f"exported {out_prefix}.safetensors (step {run.step})")
    C.json_dump(os.path.join(run.dir, "eval.json"), dict(baselines=bl, trained=ev, samples=sm, f16=f16_note,
                                                          step=run.step))


def fmt_row(name, steps, ce_v, s):
    return (f"| {name} | {steps} | {ce_v:.4f} | {s['accuracy']:.3f} ({s['correct']}/{s['n']}; "
            f"{s['lo']:.3f}-{s['hi']:.3f}) | {s['fid']:.2f} | {s['seconds']:.0f} |")


GATE_NORM_WORDS = {"joint": "as one vector of 2*vocab values, as the released `_hv_gate`",
                   "per-head": "each head on its own (this project's first variant)"}
GATE_FORMULA = {
    "joint": "Gate (`flashar.gate_norm` = joint): x = [H; V] (2*vocab values), "
             "`z = clamp((x - mean x) / sqrt(max(mean((x - mean x)^2), 1e-6)), -6, 6)`; "
             "`g = sigmoid(gate.fc2.weight @ SiLU(gate.fc1.weight @ z) + gate.fc2.bias)`, the weight of H.",
    "per-head": "Gate (`flashar.gate_norm` = per-head): `z_H = clamp((H - mean H) / (rms(H - mean H) + 1e-6), "
                "-6, 6)`, likewise z_V; `g = sigmoid(gate.fc2.weight @ SiLU(gate.fc1.weight @ [z_H; z_V]) + "
                "gate.fc2.bias)`, the weight of H."}


def card_what(args, model, w):
    cfg = model.cfg
    W, N = cfg.grid_size, cfg.block_size
    nparam_new = sum(p.numel() for p in model.vertical.parameters()) + sum(p.numel() for p in model.gate.parameters())
    return (
        f"FlashAR (Zhou et al., arXiv 2605.09430) post-training of `{args.base}`: the same {w['backbone']} "
        f"(fine-tuned) emits one anti-diagonal of the {W}x{W} token grid per forward, "
        f"{2 * W - 1} forwards per image instead of {N}. tools/flashar_model.py `FlashAR`: the "
        f"backbone's own head is the horizontal head H (cell (r,c) predicts (r,c+1)); a "
        f"vertical branch of {model.n_vertical} block(s) like the backbone's reads the hidden state entering "
        f"backbone layer {model.vertical_start} (so it runs beside the last {cfg.n_layer - model.vertical_start} "
        f"layer(s), no extra serial depth), then {w['vertical_head']}: V, (r,c) predicts (r+1,c). "
        f"A logit gate (LlamaGen-FlashAR's `--hv-gate`, an MLP 2*vocab -> {model.gate_hidden} -> 1 on the "
        f"two heads' logits, centred, RMS-scaled and clamped {GATE_NORM_WORDS[model.gate.norm]}) mixes them: "
        f"target (0,0) = g*H + (1-g)*V at {w['corner']}; row 0 = H(r,c-1); column 0 = V(r-1,c); interior = "
        f"g*H(r,c-1) + (1-g)*V(r-1,c). Attention (backbone and branch): {w['prefix']} is causal; a cell on "
        f"diagonal d = r+c sees it and every cell with r'+c' <= d, its own diagonal "
        f"included. {nparam_new / 1e6:.3f}M parameters beside the backbone's. Lossy: samples follow "
        f"the post-trained model's diagonal factorisation, not {args.base}'s distribution.")


def card_contract(model, w):
    W = model.cfg.grid_size
    return (
        "Decoding (`flashar_model.generate_diagonal`, the reference of the engine's `vkspec generate "
        f"--method flashar`, checked token for token by `tests/test_flashar.cpp`): prefill {w['prefix']} "
        f"(rows [cond; uncond] with CFG); the corner's fused logits from the two heads at {w['corner']}. "
        f"Then for d = 0 .. {2 * W - 3}: one forward over the cells of diagonal d "
        f"(ascending row, at their raster positions {w['positions']}; no mask among them; keys/values "
        "cached in the backbone layers and in the vertical blocks), fused logits for every cell of "
        "diagonal d+1 (H from the left neighbour, V from the upper one, per the rules above; the gate "
        "per CFG row), then logits = u + cfg * (c - u), temperature, top-k, and all cells of diagonal "
        f"d+1 sampled at once. {2 * W - 1} forwards in all (the last cell is never fed).\n\n"
        + GATE_FORMULA[model.gate.norm])


def card_training(args, run, model, w):
    W, N = model.cfg.grid_size, model.cfg.block_size
    cmds = run.extra.get("cmds") or [run.extra.get("cmd", C.cmdline())]
    return (
        "`" + "`\n\n`".join(dict.fromkeys(cmds)) + "`\n\n"
        f"(an invocation stopped by `--max-wall-min` is continued by rerunning it.) {run.summary()}, "
        f"batch {args.batch} images of {N} tokens from the 60k training grids "
        f"(train_runs/tokens_{W}_train.npy){w['train_conditions']}, on a shared CPU core.\n\n"
        f"Init: backbone = `{args.base}`; vertical block(s) = copies of its layer(s) "
        f"{model.vertical_start}..{model.vertical_start + model.n_vertical - 1}, vertical norm and head = "
        f"copies of its {w['head_copy']}; gate output layer zero (g = 0.5).\n\n"
        f"Loss (paper Eq. 5): CE(fused) + {args.aux_h:g} CE(H alone) + {args.aux_v:g} CE(V alone) + "
        f"{args.kd_weight:g} * T^2 * KL(teacher || V) at T = {args.kd_temp:g}; teacher = the original "
        f"`{args.base}` run raster-causally (its distribution of cell (r+1,c) given the raster prefix), "
        f"no grad. Condition dropout {args.class_dropout:g} to {w['null']} (the teacher sees the same "
        f"conditions). Stage 1 (first {args.stage1_frac:.0%} of the schedule): backbone frozen, the "
        f"branch, its head and the gate trained; stage 2: everything, the backbone at "
        f"{args.backbone_lr_mult:g} x the lr. AdamW (0.9, 0.95), weight decay {args.weight_decay:g} on "
        f"matrices, clip 1.0, peak lr {args.lr:g}, warmup {args.warmup:g} then cosine to "
        f"{args.min_lr_ratio:g} x (common.lr_at) over a {args.budget_min:g} compute-minute budget "
        f"(or the wall cap, whichever binds first).")


def card_results(args, model, w, samp, scores, n_ev, name):
    bl, ev, sm, f16_note = scores
    W, N = model.cfg.grid_size, model.cfg.block_size
    return (
        f"Default sampler: cfg {samp['cfg_scale']:g}, temperature {samp['temperature']:g}, no top-k/top-p "
        f"(`{args.base}`'s). {args.eval_samples} samples each ({args.eval_samples // 10} per class"
        f"{w['eval_conditions']}, seed {args.eval_seed}); class accuracy by `fmnist_classifier` with its 95 % "
        "Wilson interval; FID in that classifier's feature space against the 10k test set (only comparable "
        f"within this project; at {args.eval_samples} samples its sampling noise is several points). "
        f"Cross-entropy: nats per token on the first {n_ev} test images (conditional{w['eval_conditions']}), "
        f"teacher forced: raster for `{args.base}`, the fused diagonal factorisation for FlashAR. Seconds: "
        f"PyTorch on one shared CPU core, diagonal in batches of 100, raster {w['raster_how']}, indicative only.\n\n"
        "| model, decoding | forwards per image | test CE | class accuracy (95 %) | FID | seconds |\n"
        "|---|---|---|---|---|---|\n"
        + fmt_row(f"`{args.base}`, raster", N, bl["raster_ce"], bl["raster_samples"]) + "\n"
        + fmt_row(f"`{args.base}` + untrained branch (head copy, gate 0.5), diagonal", 2 * W - 1,
                  bl["untrained"]["fuse"], bl["untrained_samples"]) + "\n"
        + fmt_row(f"`{name}`, diagonal", 2 * W - 1, ev["fuse"], sm) + "\n\n"
        f"- heads alone on the targets each can predict: H {ev['h']:.4f}, V {ev['v']:.4f} nats "
        f"(untrained: H {bl['untrained']['h']:.4f}, V {bl['untrained']['v']:.4f})\n"
        f"- mean gate g (weight of H) on interior cells: {ev['gate']:.3f}; at the corner: "
        f"{ev['corner_gate']:.3f} (untrained 0.5)\n- {f16_note}\n")


def card_sections(args, run, model, w, samp, scores, meta, n_ev, name):
    samples = (f"`{name}_samples.png`: one column per class (0..9 left to right), 8 samples each{w['sample_conditions']}, "
               "diagonal decoding with the default sampler, seed 2.")
    dtypes = (f"Backbone as `{args.base}` (same names: matrices and embeddings F16, norms and biases F32); "
              "`vertical.layers.{i}.*` like a backbone layer (F16 matrices, F32 norms), "
              f"`vertical.norm.weight` F32 [dim], {w['vertical_names']}; "
              "`gate.fc1.weight` F32 [gate_hidden, 2*vocab] (columns 0..vocab-1 read z_H, vocab.. z_V), "
              "`gate.fc2.weight` F32 [1, gate_hidden], `gate.fc2.bias` F32 [1].")
    return [("What", card_what(args, model, w)), ("Decoding contract", card_contract(model, w)),
            ("Training", card_training(args, run, model, w)),
            ("Results", card_results(args, model, w, samp, scores, n_ev, name)),
            ("Samples", samples), ("Dtypes", dtypes), ("Metadata", C.fmt_meta(meta))]


# ----------------------------------------------------------------------------------------------
def param_groups(model):
    groups = {"new_decay": [], "new_nodecay": [], "bb_decay": [], "bb_nodecay": []}
    for n, p in model.named_parameters():
        key = ("bb_" if n.startswith("base.") else "new_") + ("decay" if p.dim() >= 2 else "nodecay")
        groups[key].append(p)
    return groups


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="fmnist_flashar16")
    ap.add_argument("--run-name", default="flashar", help="train_runs/<run-name>/")
    ap.add_argument("--base", default="fmnist_gpt16")
    ap.add_argument("--vertical-layers", type=int, default=1)
    ap.add_argument("--gate-norm", choices=("joint", "per-head"), default="joint",
                    help="the gate's input normalisation: joint (the released code's) or per-head (ours, earlier)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--backbone-lr-mult", type=float, default=0.2)
    ap.add_argument("--warmup", type=float, default=0.03, help="fraction of the schedule")
    ap.add_argument("--min-lr-ratio", type=float, default=0.05)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--stage1-frac", type=float, default=0.25)
    ap.add_argument("--aux-h", type=float, default=0.05)
    ap.add_argument("--aux-v", type=float, default=0.05)
    ap.add_argument("--kd-weight", type=float, default=0.2)
    ap.add_argument("--kd-temp", type=float, default=2.0)
    ap.add_argument("--class-dropout", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=100000, help="step cap (the budget normally binds first)")
    ap.add_argument("--budget-min", type=float, default=60, help="compute minutes, both stages")
    ap.add_argument("--wall-cap-min", type=float, default=None, help="schedule's wall-clock length (all invocations)")
    ap.add_argument("--max-wall-min", type=float, default=None, help="stop THIS invocation after this long")
    ap.add_argument("--ckpt-every-s", type=float, default=240)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--val-every", type=int, default=50, help="steps; fused CE on --val-images held-out images")
    ap.add_argument("--val-images", type=int, default=100, help="the LAST test images (not the eval ones)")
    ap.add_argument("--eval-images", type=int, default=1000, help="first test images, cross-entropy")
    ap.add_argument("--eval-samples", type=int, default=300)
    ap.add_argument("--eval-seed", type=int, default=1)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--out", default=None, help="export prefix (default assets-dir/name)")
    ap.add_argument("--export-only", action="store_true", help="evaluate + export the checkpoint now")
    ap.add_argument("--eval-only", action="store_true", help="print the checkpoint's CE and gate, write nothing")
    ap.add_argument("--baselines-only", action="store_true", help="compute / cache the two baselines and exit")
    ap.add_argument("--measure", type=int, default=0, help="time N steps of each stage, write nothing")
    args = ap.parse_args()
    C.set_threads()
    torch.manual_seed(0)

    conds = conditions_for(args.assets_dir, args.base)
    samp = sampler_from_meta(conds.meta)
    model = conds.make_flashar(args.vertical_layers, gate_norm=args.gate_norm)
    groups = param_groups(model)
    opt = torch.optim.AdamW([{"params": groups["new_decay"], "weight_decay": args.weight_decay},
                             {"params": groups["new_nodecay"], "weight_decay": 0.0},
                             {"params": groups["bb_decay"], "weight_decay": args.weight_decay},
                             {"params": groups["bb_nodecay"], "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    run = C.Run(args.run_name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir, args.wall_cap_min)
    args.run_dir_resolved = run.dir
    out_prefix = args.out or os.path.join(args.assets_dir, args.name)
    W = model.cfg.grid_size
    tok_tr, lab_tr = load_tokens(W, "train", C.RUNS)
    tok_te, lab_te = load_tokens(W, "test", C.RUNS)
    tok_ev, lab_ev = tok_te[:args.eval_images], lab_te[:args.eval_images]
    tok_va, lab_va = tok_te[-args.val_images:], lab_te[-args.val_images:]

    if args.baselines_only:
        log = C.Log(os.path.join(run.dir, "baselines.log"))
        bl = baselines(args, conds, tok_ev, lab_ev, samp, Scorer(args.assets_dir, C.RUNS), log)
        print(json.dumps(bl, indent=1))
        return
    if args.measure:
        for stage in (1, 2):
            model.base.requires_grad_(stage == 2)
            t0 = time.time()
            for s in range(args.measure):
                i, _ = C.step_batch(s, len(tok_tr), args.batch)
                cond = conds.train(lab_tr[i], torch.Generator().manual_seed(s), args.class_dropout)
                loss, parts = losses(model, conds, tok_tr[i], cond, args, backbone_grad=stage == 2)
                C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            print(f"stage {stage}: {(time.time() - t0) / args.measure:.2f} s/step, last {parts}")
        return

    run.resume(model, opt)
    nnew = sum(p.numel() for p in groups["new_decay"] + groups["new_nodecay"])
    run.log(f"FlashAR on {args.base}: V={args.vertical_layers} at layer {model.vertical_start}, gate hidden "
            f"{model.gate_hidden}, {nnew / 1e6:.3f}M new params; batch {args.batch} lr {args.lr} "
            f"budget {args.budget_min} compute min, stage 1 {args.stage1_frac}; sampler {samp}")
    if args.eval_only:
        print(json.dumps(dict(step=run.step, diagonal=diag_ce(model, conds, tok_ev, lab_ev)), indent=1))
        return
    if args.export_only:
        export(args, run, conds, model, tok_ev, lab_ev, samp, out_prefix)
        return

    cmds = run.extra.setdefault("cmds", [])
    cmds.append(C.cmdline())
    t_start, t_last, steps_last = time.time(), time.time(), run.step
    stopped = False
    while not run.done():
        if args.max_wall_min and time.time() - t_start > args.max_wall_min * 60:
            stopped = True
            break
        prog = run.progress()
        stage2 = prog >= args.stage1_frac
        model.base.requires_grad_(stage2)
        model.train()
        lr = C.lr_at(prog, args.lr, args.warmup, args.min_lr_ratio)
        ramp = min(1.0, (prog - args.stage1_frac) / 0.05) if stage2 else 0.0
        for k, pg in enumerate(opt.param_groups):
            pg["lr"] = lr if k < 2 else lr * args.backbone_lr_mult * ramp
        i, g = C.step_batch(run.step, len(tok_tr), args.batch)
        tok, cond = tok_tr[i], conds.train(lab_tr[i], g, args.class_dropout)
        loss, parts = losses(model, conds, tok, cond, args, backbone_grad=stage2)
        C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_norm_(
            [p for p in model.parameters() if p.requires_grad], 1.0))
        save = run.tick()
        if run.step % args.log_every == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} stage {2 if stage2 else 1} " +
                    " ".join(f"{k} {v:.4f}" for k, v in parts.items()) +
                    f" lr {lr:.2e} {sps:.2f} s/step progress {run.progress():.3f} "
                    f"compute {run.compute_s / 60:.1f} min")
            t_last, steps_last = time.time(), run.step
        if args.val_every and run.step % args.val_every == 0:
            v = diag_ce(model, conds, tok_va, lab_va)
            run.log(f"step {run.step} val ({len(tok_va)} held-out test images): " +
                    " ".join(f"{k} {x:.4f}" for k, x in v.items()))
            t_last = time.time()
        if save:
            run.save(model, opt)
    run.save(model, opt)
    if stopped:
        run.log(f"--max-wall-min {args.max_wall_min} reached: stopped at {run.summary()}, progress "
                f"{run.progress():.3f}; rerun the same command to continue")
        return
    run.log(f"schedule complete: {run.summary()}")
    export(args, run, conds, model, tok_ev, lab_ev, samp, out_prefix)


if __name__ == "__main__":
    main()
