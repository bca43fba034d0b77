"""Train SSD's latent heads (Xiang et al. 2026) on the frozen fmnist_gpt16 by self-distillation.

What the heads are: tools/vkspec_models.py `LatentHeads` (contract there). A horizontal head `h`
maps the target's final normalised hidden state at the position predicting token n to a
prediction of the state predicting token n+1; a vertical head `v` to the state predicting n+W.
Both are applied recursively in latent space, so one pair of heads drafts any number of columns
to the right and rows below; token logits come from the target's own frozen `output`.

Data: the target's own samples (tools/ssd_distill_set.py, default sampler from the asset's
metadata), not the dataset. The regression targets are the target's own hidden states on those
samples, recomputed each step by a teacher-forced forward of the frozen target (with the null
class 10% of the time, so the heads also serve the unconditional row of a CFG batch).

Loss: smooth L1 (Huber, --beta) between predicted and true hidden states, averaged over the
unrolled steps h^1..h^K (K = --rollout-h, inside a row) and v^1..v^R (R = --rollout-v, inside
the grid), gradients through the recursion. AdamW, warmup + cosine (common.lr_at), resumable
from train_runs/<name>/ckpt.pt.

Evaluation (also `--eval-only`): on held-out self-generated images (the test split of the
same tool, other seeds), per target offset, top-1 accuracy of the head's argmax against the
token the target actually sampled there, and the one-token acceptance E[sum_x min(p_head,
p_base)] against the target's distribution at that position given the true prefix, both with
the sampler's CFG/temperature (how inference would use them) and without CFG; the same numbers
for the token-predicting heads (assets/fmnist_gpt16_heads, `DraftHeads`) on the same images.
"""
import argparse
import json
import os
import time

import torch
import torch.nn.functional as F

import common as C
from safetensors_io import load_file, save_file
from ssd_distill_set import load_distill_set, load_frozen_base, sampler_from_meta
from vkspec_models import DraftHeads, LATENT_HEAD_NAMES, LatentHeads, draft_head_offsets, \
    latent_head_offsets

DISTILL_DIR = os.path.join(C.RUNS, "ssd_distill")


def base_hidden(base, tok, lab):
    """Teacher-forced final normalised hidden [B, N, D]: index n = the state predicting token n."""
    x = base.embed(tok[:, :-1], lab)
    return base.hidden(x, torch.arange(x.shape[1]))


def rollout_pairs(heads, g, name, steps):
    """g: true states on the grid [B, W, W, D]. Yields (k, prediction, target) for k = 1..steps,
    the k-fold head applied to every source whose target stays in the row (h) / grid (v)."""
    W = g.shape[1]
    axis = 2 if name == "h" else 1
    x = g
    for k in range(1, min(steps, W - 1) + 1):
        x = heads(name, x.narrow(axis, 0, W - k))
        yield k, x, g.narrow(axis, k, W - k)


def latent_losses(base, heads, tok, lab, args):
    with torch.no_grad():
        if args.null_p > 0:
            drop = torch.rand(lab.shape[0]) < args.null_p
            lab = torch.where(drop, torch.full_like(lab, base.cfg.num_classes), lab)
        W = base.cfg.grid_size
        g = base_hidden(base, tok, lab).view(tok.shape[0], W, W, -1)
    terms = {}
    for name, steps in (("h", args.rollout_h), ("v", args.rollout_v)):
        for k, pred, tgt in rollout_pairs(heads, g, name, steps):
            terms[f"{name}{k}"] = F.smooth_l1_loss(pred, tgt, beta=args.beta)
    return terms


# ----------------------------------------------------------------------------------------------
# evaluation: latent heads and token heads on the same held-out self-generated images
# ----------------------------------------------------------------------------------------------
def _shift(t, axis, k, src):
    """Grid tensor [B, W, W, ...]: the source (src=True) or target slice for offset k on axis."""
    W = t.shape[1]
    return t.narrow(axis, 0, W - k) if src else t.narrow(axis, k, W - k)


@torch.no_grad()
def evaluate(base, tok, lab, samp, latent=None, token=None, eval_h=5, eval_v=3, bs=25):
    """Returns {row key: metrics}. Row keys: 'latent h^k', 'latent v^r', 'token hj', 'token vr',
    each with offset, n (targets), acc/accept with CFG ('cfg') and without ('cond'), and for
    the rows' targets the base's own top-1 agreement with the sampled token ('base_acc')."""
    W, s, T = base.cfg.grid_size, samp["cfg_scale"], max(samp["temperature"], 1e-5)
    null = torch.full_like(lab, base.cfg.num_classes)
    agg = {}

    def add(key, off, head_c, head_u, base_c, base_u, t, extra=None):
        hc, bc = head_c.float(), base_c.float()
        hg, bg = (head_u + s * (head_c - head_u)) / T, (base_u + s * (base_c - base_u)) / T
        r = agg.setdefault(key, {"offset": off, "n": 0, "acc_cond": 0.0, "accept_cond": 0.0,
                                 "acc_cfg": 0.0, "accept_cfg": 0.0, "base_acc": 0.0})
        n = t.numel()
        r["n"] += n
        r["acc_cond"] += (hc.argmax(-1) == t).sum().item()
        r["accept_cond"] += torch.minimum(hc.softmax(-1), bc.softmax(-1)).sum(-1).sum().item()
        r["acc_cfg"] += (hg.argmax(-1) == t).sum().item()
        r["accept_cfg"] += torch.minimum(hg.softmax(-1), bg.softmax(-1)).sum(-1).sum().item()
        r["base_acc"] += (bg.argmax(-1) == t).sum().item()
        for k, v in (extra or {}).items():
            r[k] = r.get(k, 0.0) + v * n

    for i in range(0, len(tok), bs):
        tb, lb = tok[i:i + bs], lab[i:i + bs]
        B = tb.shape[0]
        hc, hu = base_hidden(base, tb, lb), base_hidden(base, tb, null[i:i + bs])
        lc, lu = base.output(hc).float(), base.output(hu).float()
        grid = lambda t: t.reshape(B, W, W, *t.shape[2:])  # noqa: E731
        gt, ghc, ghu, glc, glu = grid(tb), grid(hc), grid(hu), grid(lc), grid(lu)
        if latent is not None:
            for name, steps in (("h", eval_h), ("v", eval_v)):
                axis = 2 if name == "h" else 1
                xc, xu = ghc, ghu
                for k in range(1, min(steps, W - 1) + 1):
                    xc = latent(name, xc.narrow(axis, 0, W - k))
                    xu = latent(name, xu.narrow(axis, 0, W - k))
                    true = _shift(ghc, axis, k, False)
                    extra = {"smooth_l1": F.smooth_l1_loss(xc, true).item(),
                             "cos": F.cosine_similarity(xc, true, dim=-1).mean().item()}
                    add(f"latent {name}^{k}", k * (1 if name == "h" else W),
                        base.output(xc), base.output(xu), _shift(glc, axis, k, False),
                        _shift(glu, axis, k, False), _shift(gt, axis, k, False), extra)
        if token is not None:
            oc, ou = token(hc, base.output), token(hu, base.output)
            for name, off in draft_head_offsets(W).items():
                if name not in oc:
                    continue
                axis, k = (2, off) if name.startswith("h") else (1, off // W)
                add(f"token {name}", off, _shift(grid(oc[name]), axis, k, True),
                    _shift(grid(ou[name]), axis, k, True), _shift(glc, axis, k, False),
                    _shift(glu, axis, k, False), _shift(gt, axis, k, False))
    for r in agg.values():
        for k in list(r):
            if k not in ("offset", "n"):
                r[k] /= r["n"]
    return agg


def load_token_heads(path):
    sd, meta = load_file(path)
    heads = DraftHeads(int(meta["dim"]), meta["heads"].split(","))
    heads.load_state_dict({k: v.float() for k, v in sd.items()})
    return heads.eval()


def offset_label(off, W):
    return f"+{off}" if off < W else f"+{off} ({off // W} row{'s' if off >= 2 * W else ''} down)"


def results_table(ev, W, mode):
    """Markdown: one row per target offset, token heads beside latent heads."""
    by_off = {}
    for key, r in ev.items():
        fam, head = key.split(" ")
        by_off.setdefault(r["offset"], {})[fam] = (head, r)
    rows = ["| offset | targets | base top-1 | token head | acc | accept | latent head | acc | accept |",
            "|---|---|---|---|---|---|---|---|---|"]
    for off in sorted(by_off):
        d = by_off[off]
        any_r = next(iter(d.values()))[1]
        cells = [offset_label(off, W), str(any_r["n"]), f"{any_r['base_acc']:.3f}"]
        for fam in ("token", "latent"):
            if fam in d:
                head, r = d[fam]
                cells += [f"`{head}`", f"{r['acc_' + mode]:.3f}", f"{r['accept_' + mode]:.3f}"]
            else:
                cells += ["-", "-", "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="fmnist_gpt16_latent_heads")
    ap.add_argument("--base", default="fmnist_gpt16")
    ap.add_argument("--token-heads", default="fmnist_gpt16_heads", help="asset to compare against ('' = none)")
    ap.add_argument("--data", default=DISTILL_DIR, help="tools/ssd_distill_set.py output")
    ap.add_argument("--train-images", type=int, default=None, help="use at most this many")
    ap.add_argument("--eval-images", type=int, default=500)
    ap.add_argument("--hidden", type=int, default=512, help="MLP width of each head block")
    ap.add_argument("--depth", type=int, default=1, help="MLP blocks per head")
    ap.add_argument("--rollout-h", type=int, default=5, help="trained horizontal steps (paper: 5 per row)")
    ap.add_argument("--rollout-v", type=int, default=3, help="trained vertical steps (rows)")
    ap.add_argument("--beta", type=float, default=1.0, help="smooth L1 transition point")
    ap.add_argument("--null-p", type=float, default=0.1, help="null-class probability (CFG row)")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--budget-min", type=float, default=45)
    ap.add_argument("--wall-cap-min", type=float, default=None)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--eval-every", type=int, default=100, help="steps; quick eval on 50 test images")
    ap.add_argument("--ckpt-every-s", type=float, default=300)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--eval-only", action="store_true", help="evaluate the checkpoint, write nothing")
    args = ap.parse_args()
    C.set_threads()
    torch.manual_seed(0)

    base, base_meta = load_frozen_base(args.assets_dir, args.base)
    samp = sampler_from_meta(base_meta)
    heads = LatentHeads(base.cfg.dim, args.hidden, args.depth)
    opt = torch.optim.AdamW(heads.parameters(), lr=args.lr, weight_decay=0.0)
    run = C.Run(args.name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(heads, opt)
    tok_tr, lab_tr = load_distill_set(args.data, "train", args.train_images)
    tok_te, lab_te = load_distill_set(args.data, "test", args.eval_images)
    nparam = sum(p.numel() for p in heads.parameters())
    run.log(f"latent heads {LATENT_HEAD_NAMES} hidden {args.hidden} depth {args.depth} params "
            f"{nparam / 1e6:.3f}M; rollout h {args.rollout_h} v {args.rollout_v}; data {args.data}: "
            f"{len(tok_tr)} train / {len(tok_te)} test self-generated images; sampler {samp}")
    if args.eval_only:
        token = load_token_heads(os.path.join(args.assets_dir, args.token_heads + ".safetensors")) \
            if args.token_heads else None
        ev = evaluate(base, tok_te, lab_te, samp, heads.eval(), token, args.rollout_h, args.rollout_v)
        print(json.dumps(ev, indent=1))
        for mode in ("cfg", "cond"):
            print(f"\n{mode}:\n" + results_table(ev, base.cfg.grid_size, mode))
        return

    t_last, steps_last = time.time(), run.step
    while not run.done():
        i, _ = C.step_batch(run.step, len(tok_tr), args.batch)
        C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
        terms = latent_losses(base, heads, tok_tr[i], lab_tr[i], args)
        loss = sum(terms.values()) / len(terms)
        C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_norm_(heads.parameters(), 1.0))
        save = run.tick()
        if run.step % 10 == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} " +
                    " ".join(f"{k} {v.item():.4f}" for k, v in terms.items()) +
                    f" lr {opt.param_groups[0]['lr']:.2e} {sps:.2f} s/step progress {run.progress():.3f}")
            t_last, steps_last = time.time(), run.step
        if args.eval_every and run.step % args.eval_every == 0:
            ev = evaluate(base, tok_te[:50], lab_te[:50], samp, heads.eval(), None, 2, 1)
            heads.train()
            run.log(f"step {run.step} eval(50 test, cfg): " + " ".join(
                f"{k.split()[1]} acc {r['acc_cfg']:.3f} accept {r['accept_cfg']:.3f}" for k, r in ev.items()))
        if save:
            run.save(heads, opt)
    run.save(heads, opt)
    export(args, run, base, base_meta, heads.eval(), tok_tr, tok_te, lab_te, samp)


def export(args, run, base, base_meta, heads, tok_tr, tok_te, lab_te, samp):
    token = load_token_heads(os.path.join(args.assets_dir, args.token_heads + ".safetensors")) \
        if args.token_heads else None
    ev = evaluate(base, tok_te, lab_te, samp, heads, token, args.rollout_h, args.rollout_v)
    run.log("eval " + json.dumps(ev))
    C.json_dump(os.path.join(run.dir, "eval.json"), ev)
    W, D = base.cfg.grid_size, base.cfg.dim
    offs = latent_head_offsets(W)
    state = C.fp16_export(heads.state_dict())
    # the shipped dtypes against f32 on the first 100 test images, one step of each head
    h16 = LatentHeads(D, args.hidden, args.depth)
    h16.load_state_dict({k: v.float() for k, v in state.items()})
    n16 = min(100, len(tok_te))
    e32, e16 = (evaluate(base, tok_te[:n16], lab_te[:n16], samp, m.eval(), None, 1, 1)
                for m in (heads, h16))
    f16_note = (f"Shipped dtypes (F16 matrices) against f32 on {n16} test images, accept with CFG: " +
                ", ".join(f"{k.split()[1]} {e16[k]['accept_cfg']:.4f} vs {e32[k]['accept_cfg']:.4f}"
                          for k in e32) + ".")
    run.log(f16_note)
    meta = {"vkspec.kind": "latent_heads", "base": args.base, "dim": str(D),
            "vocab_size": str(base.cfg.vocab_size), "grid_size": str(W),
            "heads": ",".join(LATENT_HEAD_NAMES),
            "offsets": ",".join(str(offs[n]) for n in LATENT_HEAD_NAMES),
            "hidden": str(args.hidden), "depth": str(args.depth),
            "placement": "post_norm", "predicts": "post_norm_hidden",
            "block": "residual_silu_mlp", "application": "recursive",
            "rollout_h": str(args.rollout_h), "rollout_v": str(args.rollout_v),
            "output": "shared_base_output", "loss": f"smooth_l1_beta{args.beta:g}",
            "training_data": "self_distillation"}
    base_path = os.path.join(args.assets_dir, args.name)
    nparam = sum(p.numel() for p in heads.parameters())
    n_tr = len(tok_tr)
    C.write_card(base_path + ".md", f"{args.name}: SSD latent heads for {args.base}", card_sections(
        args, run, W, D, nparam, n_tr, len(tok_te), samp, ev, meta, f16_note))
    save_file(state, base_path + ".safetensors", meta)  # last: marks the stage done
    run.log(f"exported {base_path}.safetensors")


def cmdline():
    """common.cmdline() with the thread count this run really used."""
    return C.cmdline().replace("OMP_NUM_THREADS=2", f"OMP_NUM_THREADS={torch.get_num_threads()}", 1)


def card_sections(args, run, W, D, nparam, n_tr, n_te, samp, ev, meta, f16_note=""):
    """The card written at export: What, Training, Results, Dtypes, Metadata."""
    what = (
        "SSD's latent heads (Xiang et al. 2026; tools/vkspec_models.py `LatentHeads`): instead "
        "of tokens they predict the target's own hidden states at neighbouring positions. "
        f"h(n) = {args.base}'s final hidden state after its final `norm` at the position whose "
        "logits predict image token n. Head `h` maps h(n) to a prediction of h(n+1) (next "
        f"column), head `v` maps h(n) to a prediction of h(n+{W}) (next row, same column); each "
        f"is {args.depth} block(s) of `y = x + fc2(SiLU(fc1 x))` (width {args.hidden}, biases, "
        f"{nparam / 1e6:.3f}M parameters for both). They are applied recursively in latent "
        "space (h^k(h(n)) predicts h(n+k), v^r(h(n)) predicts h(n+r*W)); token logits for a "
        "predicted state are the target's own frozen `output` applied to it (not stored here), "
        "combined over the CFG rows like the target's. Trained by self-distillation: on "
        f"{n_tr} images the target sampled itself (tools/ssd_distill_set.py, its default "
        f"sampler cfg {samp['cfg_scale']:g}, temperature {samp['temperature']:g}), smooth-L1 "
        "against its own hidden states, unrolled "
        f"h^1..h^{args.rollout_h} inside a row and v^1..v^{args.rollout_v} inside the grid; "
        "targets past the row end / grid bottom never trained.")
    training = (
        "Data (train and held-out test splits, different seeds):\n\n"
        f"`OMP_NUM_THREADS=1 /usr/bin/python3 tools/ssd_distill_set.py --split test --images {n_te}`\n\n"
        f"`OMP_NUM_THREADS=1 /usr/bin/python3 tools/ssd_distill_set.py --split train --images {n_tr}`\n\n"
        f"Heads:\n\n`{cmdline()}`\n\n"
        f"Batch {args.batch} images (all positions), peak lr {args.lr:g}, {run.summary()} on a "
        f"shared CPU core; target frozen, null class {args.null_p:g} of the time.")
    res = ""
    for mode, title in (("cfg", f"with the sampler's CFG {samp['cfg_scale']:g}, temperature "
                                f"{samp['temperature']:g} (as inference uses them)"),
                        ("cond", "conditional row only, no CFG, temperature 1")):
        res += f"**{title}**\n\n" + results_table(ev, W, mode) + "\n\n"
    lat = [(k, r) for k, r in ev.items() if k.startswith("latent")]
    res += ("Latent prediction error (conditional row): " + ", ".join(
        f"{k.split()[1]} smooth-L1 {r['smooth_l1']:.3f} cos {r['cos']:.3f}" for k, r in lat) + "\n\n")
    res += (f"{n_te} held-out self-generated images, teacher-forced (the true prefix). `acc` = "
            "top-1 of the head's argmax against the token the target actually sampled there; "
            "`accept` = E[sum_x min(p_head(x), p_base(x))], the probability a single "
            "speculative proposal from the head is accepted against the target's distribution "
            "at that position; `base top-1` = the target's own argmax against its sample (in "
            "expectation a ceiling for `acc`). Token heads: assets/fmnist_gpt16_heads (trained with "
            "cross-entropy on dataset tokens, one head per offset, up to +4 / 2 rows).\n\n"
            "What the comparison does and does not isolate: it sets the paper's design as a whole "
            "(hidden-state targets, self-distilled data, one weight-tied pair of heads used "
            f"recursively, {nparam / 1e6:.3f}M parameters) against our token heads as shipped "
            "(token targets, dataset tokens, six separate heads, 0.395M parameters). Which of "
            "the three differences carries the gap is not measured here; a token head trained "
            "on the same self-distillation set would separate the data from the target space.\n\n"
            + f16_note)
    return [("What", what), ("Training", training), ("Results", res),
            ("Dtypes", "`latent_heads.{h,v}.{i}.fc1.weight` F16 [hidden, dim], `.fc1.bias` F32 "
                       "[hidden], `.fc2.weight` F16 [dim, hidden], `.fc2.bias` F32 [dim]."),
            ("Metadata", C.fmt_meta(meta))]


if __name__ == "__main__":
    main()
