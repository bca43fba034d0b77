"""Train an EAGLE-style drafter (LANTERN's drafter, issue #18 part 3) on the frozen fmnist_gpt16.

What the drafter is: tools/vkspec_models.py `EagleDrafter` (contract there and in the card):
element j reads (token j, f(j)), f(j) = the target's final normalised hidden state that sampled
token j, fuses them with fc([embed_norm(E(token j)); f(j)]), runs one LlamaGen block with causal
attention and the target's 2D RoPE, and outputs a prediction of f(j+1); draft logits for token
j+1 are the target's own frozen `output` of it (EAGLE / EAGLE-2, Li et al. 2024; LANTERN, Jang
et al. ICLR 2025, drafts with EAGLE-2).

Training as EAGLE / LANTERN, scaled to a 6-layer 256-wide target on 2 shared CPU cores:
  * data: the target's own samples (tools/ssd_distill_set.py; LANTERN itself used dataset
    images, citing EAGLE's finding that target-generated data helps only marginally; here the
    self-generated set is what the other drafters of this project were trained on). The
    features are computed by a teacher-forced forward of the frozen target on first use of an
    image and kept in memory (FeatureCache; the soft labels are recomputed from them each
    step), with the null class 10% of the time per image (LANTERN: "dropped 10% of
    conditional embedding ... as the target"), so the drafter also serves the CFG null row.
    The first --val-images images of the train split are held out for model selection
    (LANTERN: 5% hold-out, best top-3 accuracy); train chunks written while training runs are
    picked up every --reload-every steps.
  * loss (EAGLE): v_w * SmoothL1(g(j), f(j+1)) + p_w * CE(softmax(output f(j+1)), output g(j)),
    v_w = 1, p_w = 0.1, soft labels = the target's conditional-row distribution at temperature 1;
    uniform noise on the input features, width noise * 512 / L as EAGLE's AddUniformNoise
    (L = 255 drafter elements per image).
  * AdamW betas (0.9, 0.95) (LANTERN/EAGLE), gradient value clip 0.5 (EAGLE); warmup then
    cosine (common.lr_at) over the compute budget instead of LANTERN's 2000-step linear warmup
    of a 20-epoch run (our runs are ~1-2k steps).

Evaluation (end of training, and --eval-only): on held-out self-generated images (the test split,
other seeds), for drafting depth k = 1..4 from every root n (the target has just sampled token n
from f(n)): draft top-1 accuracy against the token the target actually sampled at n+k and the
one-token acceptance E[sum_x min(p_draft(x), p_target(x))] against the target's distribution at
n+k given the true prefix. Two modes: teacher-forced (every drafter element reads the target's
true feature) and free-running chain drafting as inference does it (element n reads f(n); the
later elements read the drafter's own predicted features, its KV cache holding true elements
for the prefix); tokens are the target's samples in both (the acceptance at depth k given the
first k-1 drafts were accepted). With the sampler's CFG / temperature (as inference uses them)
and conditional row only. The shipped token heads and latent heads are evaluated on the same
images and the same targets (inside a row) for the comparison.
"""
import argparse
import glob
import json
import math
import os
import time

import torch
import torch.nn.functional as F

import common as C
from safetensors_io import load_file, save_file
from ssd_distill_set import load_distill_set, load_frozen_base, sampler_from_meta
from vkspec_models import EAGLE_PREFIX, EagleDrafter, LatentHeads, apply_rope, eagle_metadata

DISTILL_DIR = os.path.join(C.RUNS, "ssd_distill")
DEPTHS = 4


def base_hidden(base, tok, lab):
    """Teacher-forced final normalised hidden [B, N, D]: index n = f(n), the state predicting token n."""
    x = base.embed(tok[:, :-1], lab)
    return base.hidden(x, torch.arange(x.shape[1]))


def drafter_tf(drafter, base, tok, feat):
    """Teacher-forced drafter pass: elements j = 0..N-2 read (token j, f(j)); returns g [B, N-1, D]
    (g[:, j] predicts f(j+1), i.e. token j+1)."""
    N = tok.shape[1]
    return drafter(base.tok_embeddings(tok[:, :N - 1]), feat[:, :N - 1], torch.arange(1, N))


class FeatureCache:
    """The frozen target's features of each training image, per row (0 = its class, 1 = the null
    class), computed on first use and kept (f32): after the first epoch a step skips the
    target's forward, which was more than half of its cost."""

    def __init__(self, base):
        self.base, self.f, self.have = base, None, None

    def reset(self, n_images, N, D):
        self.f = torch.zeros(n_images, 2, N, D)
        self.have = torch.zeros(n_images, 2, dtype=torch.bool)

    @torch.no_grad()
    def get(self, idx, null, tok, lab):
        """idx [B] image indices, null [B] bool, tok/lab of those images -> features [B, N, D]."""
        row = null.long()
        miss = ~self.have[idx, row]
        if miss.any():
            lab_m = torch.where(null[miss], torch.full_like(lab[miss], self.base.cfg.num_classes), lab[miss])
            self.f[idx[miss], row[miss]] = base_hidden(self.base, tok[miss], lab_m)
            self.have[idx[miss], row[miss]] = True
        return self.f[idx, row]


def losses(base, drafter, tok, lab, args, train=True, cache=None, idx=None):
    N = tok.shape[1]
    with torch.no_grad():
        drop = torch.zeros(lab.shape[0], dtype=torch.bool)
        if train and args.null_p > 0:
            drop = torch.rand(lab.shape[0]) < args.null_p
        if cache is not None:
            f = cache.get(idx, drop, tok, lab)
        else:
            lab = torch.where(drop, torch.full_like(lab, base.cfg.num_classes), lab)
            f = base_hidden(base, tok, lab)
        tgt = f[:, 1:]
        tgt_p = base.output(tgt).float().softmax(-1)
        inp = f
        if train and args.noise > 0:
            width = args.noise * 512 / (N - 1)
            inp = f + (torch.rand_like(f) - 0.5) * width
    g = drafter_tf(drafter, base, tok, inp)
    logits = base.output(g).float()
    vloss = F.smooth_l1_loss(g, tgt)
    ploss = -(tgt_p * logits.log_softmax(-1)).sum(-1).mean()
    return vloss, ploss, logits, tgt_p


# ----------------------------------------------------------------------------------------------
# free-running chain drafting for every root at once
# ----------------------------------------------------------------------------------------------
def _qkv(layer, x, rope):
    a = layer.attention
    B, S, D = x.shape
    q, k, v = a.wqkv(layer.attention_norm(x)).split(D, dim=-1)
    q = apply_rope(q.view(B, S, a.n_head, a.head_dim), rope).transpose(1, 2)
    k = apply_rope(k.view(B, S, a.n_head, a.head_dim), rope).transpose(1, 2)
    return q, k, v.view(B, S, a.n_head, a.head_dim).transpose(1, 2)


def _finish(layer, x, y):
    B, H, S, Dh = y.shape
    h = x + layer.attention.wo(y.transpose(1, 2).reshape(B, S, H * Dh))
    return h + layer.feed_forward(layer.ffn_norm(h))


@torch.no_grad()
def chain_draft(drafter, base, tok, feat, depth, teacher=False):
    """Returns [g_1, ..., g_depth], each [B, N-1, D]: g_k[:, n] = the drafter's prediction of
    f(n+k) when drafting from root n (element n reads the true f(n); element n+i-1, i >= 2, reads
    the drafter's own g_{i-1}[:, n] (teacher=True: the true f(n+i-1) instead) with token n+i-1,
    attending to the true elements 0..n and to its own chain). Entries with n+k > N-1 are junk.
    With teacher=True, g_k[:, n] equals the teacher-forced pass at element n+k-1 (self-check)."""
    B, N = tok.shape
    S = N - 1
    sc = 1.0 / math.sqrt(base.cfg.head_dim)
    emb = base.tok_embeddings(tok[:, :S])
    rope = drafter.rope[torch.arange(1, N)].unsqueeze(0)
    # teacher-forced pass keeping each layer's keys/values
    x, kv_true = drafter.fuse(emb, feat[:, :S]), []
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    for layer in drafter.layers:
        q, k, v = _qkv(layer, x, rope)
        kv_true.append((k, v))
        att = (q @ k.transpose(-2, -1) * sc).masked_fill(~causal, float("-inf")).softmax(-1)
        x = _finish(layer, x, att @ v)
    outs = [x]
    chain = [[] for _ in drafter.layers]  # per layer: keys/values of chain steps 2.. [B,H,S,Dh]
    roots = torch.arange(S)
    for k_ in range(2, depth + 1):
        e = (roots + k_ - 1).clamp(max=S - 1)  # element index drafted at this step
        fin = feat[:, e] if teacher else outs[-1]
        x = drafter.fuse(emb[:, e], fin)
        rope_e = drafter.rope[e + 1].unsqueeze(0)
        for li, layer in enumerate(drafter.layers):
            q, kc, vc = _qkv(layer, x, rope_e)
            chain[li].append((kc, vc))
            kt, vt = kv_true[li]
            s_true = (q @ kt.transpose(-2, -1) * sc).masked_fill(~causal, float("-inf"))  # m <= n
            s_ch = torch.stack([(q * kk).sum(-1) * sc for kk, _ in chain[li]], -1)  # [B,H,S,k-1]
            att = torch.cat([s_true, s_ch], -1).softmax(-1)
            y = att[..., :S] @ vt + sum(att[..., S + i, None] * vv for i, (_, vv) in enumerate(chain[li]))
            x = _finish(layer, x, y)
        outs.append(x)
    return outs


def _cfg(c, u, s, T):
    return (u + s * (c - u)) / T


@torch.no_grad()
def evaluate(base, drafter, tok, lab, samp, depth=DEPTHS, bs=25, latent=None, token=None):
    """{(mode, depth, subset): metrics}: mode tf|free, subset all|row (targets inside the root's
    row, the subset the spatial heads can draft), metrics n, acc/accept for cfg and cond, base_acc.
    Also ('latent'|'token', k, 'row') rows for the shipped heads on the same targets."""
    W, s, T = base.cfg.grid_size, samp["cfg_scale"], max(samp["temperature"], 1e-5)
    null = torch.full_like(lab, base.cfg.num_classes)
    agg = {}
    out = base.output

    def add(key, dc, du, bc, bu, t):
        hg, bg = _cfg(dc, du, s, T), _cfg(bc, bu, s, T)
        r = agg.setdefault(key, dict(n=0, acc_cond=0.0, accept_cond=0.0, acc_cfg=0.0, accept_cfg=0.0,
                                     base_acc=0.0, top3_cfg=0.0))
        r["n"] += t.numel()
        r["acc_cond"] += (dc.argmax(-1) == t).sum().item()
        r["accept_cond"] += torch.minimum(dc.softmax(-1), bc.softmax(-1)).sum(-1).sum().item()
        r["acc_cfg"] += (hg.argmax(-1) == t).sum().item()
        r["top3_cfg"] += (hg.topk(3, -1).indices == t[..., None]).any(-1).sum().item()
        r["accept_cfg"] += torch.minimum(hg.softmax(-1), bg.softmax(-1)).sum(-1).sum().item()
        r["base_acc"] += (bg.argmax(-1) == t).sum().item()

    for i in range(0, len(tok), bs):
        tb, lb = tok[i:i + bs], lab[i:i + bs]
        B, N = tb.shape
        S = N - 1
        fc_, fu_ = base_hidden(base, tb, lb), base_hidden(base, tb, null[i:i + bs])
        lc, lu = out(fc_).float(), out(fu_).float()
        col = torch.arange(S) % W
        for mode in ("tf", "free"):
            gc = chain_draft(drafter, base, tb, fc_, depth, teacher=(mode == "tf"))
            gu = chain_draft(drafter, base, tb, fu_, depth, teacher=(mode == "tf"))
            for k in range(1, depth + 1):
                nr = N - k  # roots 0..N-1-k
                dc, du = out(gc[k - 1][:, :nr]).float(), out(gu[k - 1][:, :nr]).float()
                bc, bu, t = lc[:, k:], lu[:, k:], tb[:, k:]
                add((mode, k, "all"), dc, du, bc, bu, t)
                m = (col[:nr] + k) < W
                add((mode, k, "row"), dc[:, m], du[:, m], bc[:, m], bu[:, m], t[:, m])
        # the shipped heads on the same in-row targets: source f(n) -> token n+k
        if latent is not None or token is not None:
            for k in range(1, depth + 1):
                nr = N - k
                m = (torch.arange(nr) % W + k) < W
                bc, bu, t = lc[:, k:][:, m], lu[:, k:][:, m], tb[:, k:][:, m]
                src_c, src_u = fc_[:, :nr][:, m], fu_[:, :nr][:, m]
                if latent is not None:
                    add(("latent", k, "row"), out(latent("h", src_c, k)).float(),
                        out(latent("h", src_u, k)).float(), bc, bu, t)
                if token is not None and f"h{k}" in token.draft_heads:
                    blk = token.draft_heads[f"h{k}"]
                    add(("token", k, "row"), out(blk(src_c)).float(), out(blk(src_u)).float(), bc, bu, t)
    for r in agg.values():
        for kk in list(r):
            if kk != "n":
                r[kk] /= r["n"]
    return agg


@torch.no_grad()
def quick_val(base, drafter, tok, lab, bs=16):
    """Teacher-forced, conditional row: top-1 / top-3 against the target's argmax (EAGLE's and
    LANTERN's selection metric), acceptance against the target, and the two losses."""
    n = c1 = c3 = acc = vl = pl = 0.0
    for i in range(0, len(tok), bs):
        v, p, logits, tgt_p = losses(base, drafter, tok[i:i + bs], lab[i:i + bs], None, train=False)
        am = tgt_p.argmax(-1)
        top = logits.topk(3, -1).indices
        m = am.numel()
        n += m
        c1 += (top[..., 0] == am).sum().item()
        c3 += (top == am[..., None]).any(-1).sum().item()
        acc += torch.minimum(logits.softmax(-1), tgt_p).sum(-1).sum().item()
        vl += v.item() * m
        pl += p.item() * m
    return dict(top1=c1 / n, top3=c3 / n, accept=acc / n, vloss=vl / n, ploss=pl / n)


# ----------------------------------------------------------------------------------------------
def load_token_heads(path):
    from vkspec_models import DraftHeads
    sd, meta = load_file(path)
    heads = DraftHeads(int(meta["dim"]), meta["heads"].split(","))
    heads.load_state_dict({k: v.float() for k, v in sd.items()})
    return heads.eval()


def load_latent_heads(path):
    sd, meta = load_file(path)
    heads = LatentHeads(int(meta["dim"]), int(meta["hidden"]), int(meta["depth"]), meta["heads"].split(","))
    heads.load_state_dict({k: v.float() for k, v in sd.items()})
    return heads.eval()


def load_eagle(path, base_cfg):
    """The exported drafter file -> EagleDrafter (f32)."""
    sd, meta = load_file(path)
    d = EagleDrafter(base_cfg, int(meta["n_layer"]), meta.get("embed_norm", "none") == "rmsnorm")
    d.load_state_dict({k[len(EAGLE_PREFIX):]: v.float() for k, v in sd.items()})
    return d.eval(), meta


def n_train_chunks(data):
    return len(glob.glob(os.path.join(data, "train_*.npz")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="fmnist_eagle_drafter16")
    ap.add_argument("--run-name", default="eagle", help="train_runs/<run-name>/")
    ap.add_argument("--base", default="fmnist_gpt16")
    ap.add_argument("--token-heads", default="fmnist_gpt16_heads", help="asset to compare ('' = none)")
    ap.add_argument("--latent-heads", default="fmnist_gpt16_latent_heads", help="asset to compare ('' = none)")
    ap.add_argument("--data", default=DISTILL_DIR, help="tools/ssd_distill_set.py output")
    ap.add_argument("--val-images", type=int, default=100,
                    help="first images of the train split held out for model selection")
    ap.add_argument("--eval-images", type=int, default=200, help="test-split images for the card")
    ap.add_argument("--n-layer", type=int, default=1)
    ap.add_argument("--embed-norm", type=int, default=1, help="1: RMSNorm on the embedding (EAGLE-3); 0: raw (EAGLE-1/2)")
    ap.add_argument("--v-w", type=float, default=1.0, help="feature regression weight (EAGLE)")
    ap.add_argument("--p-w", type=float, default=0.1, help="token cross-entropy weight (EAGLE)")
    ap.add_argument("--noise", type=float, default=0.2, help="EAGLE uniform feature noise std (0 = off)")
    ap.add_argument("--null-p", type=float, default=0.1, help="null-class probability (CFG row)")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--budget-min", type=float, default=45, help="compute minutes (CPU time / threads)")
    ap.add_argument("--wall-cap-min", type=float, default=None)
    ap.add_argument("--batch", type=int, default=16, help="images per step (LANTERN: 16)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=float, default=0.05, help="fraction of the schedule")
    ap.add_argument("--eval-every", type=int, default=100, help="steps; held-out val, keeps best.pt by top-3")
    ap.add_argument("--val-batch", type=int, default=48, help="val images used by the periodic eval")
    ap.add_argument("--reload-every", type=int, default=100, help="steps; pick up new train chunks")
    ap.add_argument("--ckpt-every-s", type=float, default=240)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--eval-only", action="store_true", help="evaluate (best) checkpoint, print, write nothing")
    ap.add_argument("--export-only", action="store_true", help="export + card from the (best) checkpoint now")
    ap.add_argument("--card-only", action="store_true",
                    help="rewrite the card from train_runs/<run>/eval.json and train.log (no evaluation, no weights)")
    ap.add_argument("--train-cmd", default=None, help="--card-only: the training command to print "
                    "(default: the one recorded in the checkpoint)")
    ap.add_argument("--ckpt", choices=["best", "last"], default="best", help="what --eval-only/export use")
    ap.add_argument("--selftest", action="store_true", help="chain_draft(teacher) == teacher-forced pass")
    args = ap.parse_args()
    C.set_threads()
    torch.manual_seed(0)

    base, base_meta = load_frozen_base(args.assets_dir, args.base)
    samp = sampler_from_meta(base_meta)
    drafter = EagleDrafter(base.cfg, args.n_layer, bool(args.embed_norm))
    nparam = sum(p.numel() for p in drafter.parameters())

    if args.selftest:
        tok, lab = load_distill_set(args.data, "test", 4)
        f = base_hidden(base, tok, lab)
        for p in drafter.parameters():  # non-trivial weights
            p.data.add_(torch.randn_like(p) * 0.02)
        tf = drafter_tf(drafter, base, tok, f)
        outs = chain_draft(drafter, base, tok, f, DEPTHS, teacher=True)
        S = tok.shape[1] - 1
        worst = 0.0
        for k, g in enumerate(outs, 1):
            nr = S - k + 1
            worst = max(worst, (g[:, :nr] - tf[:, k - 1:k - 1 + nr]).abs().max().item())
        print(f"selftest: max |chain(teacher) - teacher-forced| = {worst:.2e}")
        raise SystemExit(0 if worst < 1e-4 else 1)

    opt = torch.optim.AdamW(drafter.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    run = C.Run(args.run_name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(drafter, opt)
    best_path = os.path.join(run.dir, "best.pt")
    tok_all, lab_all = load_distill_set(args.data, "train")
    tok_va, lab_va = tok_all[:args.val_images], lab_all[:args.val_images]
    tok_tr, lab_tr = tok_all[args.val_images:], lab_all[args.val_images:]
    tok_te, lab_te = load_distill_set(args.data, "test", args.eval_images)
    chunks = n_train_chunks(args.data)
    run.log(f"EAGLE drafter: {args.n_layer} layer(s), embed_norm {args.embed_norm}, {nparam / 1e6:.3f}M params; "
            f"data {args.data}: {len(tok_tr)} train / {len(tok_va)} val / {len(tok_te)} test self-generated "
            f"images; sampler {samp}; v_w {args.v_w} p_w {args.p_w} noise {args.noise} null_p {args.null_p}")

    if args.card_only:
        with open(os.path.join(run.dir, "eval.json")) as f:
            ev = {(k.split("/")[0], int(k.split("/")[1]), k.split("/")[2]): v for k, v in json.load(f).items()}
        with open(os.path.join(run.dir, "train.log")) as f:
            notes = [ln.split(" ", 2)[2].strip() for ln in f if "Shipped dtypes" in ln]
        meta = export_metadata(args, base)
        C.write_card(os.path.join(args.assets_dir, args.name + ".md"),
                     f"{args.name}: EAGLE-style drafter for {args.base}",
                     card_sections(args, run, base.cfg.grid_size, base.cfg.dim, nparam, len(tok_tr), len(tok_va),
                                   len(tok_te), samp, ev, meta, notes[-1] if notes else "",
                                   run.extra.get("best_step")))
        return
    if args.eval_only or args.export_only:
        if args.ckpt == "best" and os.path.exists(best_path):
            drafter.load_state_dict(torch.load(best_path, map_location="cpu")["model"])
        if args.eval_only:
            ev = evaluate(base, drafter.eval(), tok_te, lab_te, samp, latent=heads_or_none(args, "latent"),
                          token=heads_or_none(args, "token"))
            print(results_tables(ev, samp))
            return
        export(args, run, base, drafter.eval(), len(tok_tr), len(tok_va), tok_te, lab_te, samp, nparam)
        return

    best = run.extra.get("best_top3", -1.0)
    run.extra.setdefault("cmd", cmdline())
    t_last, steps_last = time.time(), run.step
    cache = FeatureCache(base)
    cache.reset(len(tok_tr), tok_tr.shape[1], base.cfg.dim)
    drafter.train()
    while not run.done():
        if args.reload_every and run.step % args.reload_every == 0 and n_train_chunks(args.data) != chunks:
            chunks = n_train_chunks(args.data)
            tok_all, lab_all = load_distill_set(args.data, "train")
            tok_tr, lab_tr = tok_all[args.val_images:], lab_all[args.val_images:]
            cache.reset(len(tok_tr), tok_tr.shape[1], base.cfg.dim)
            run.log(f"step {run.step}: reloaded train split, {len(tok_tr)} train images ({chunks} chunks)")
        i, _ = C.step_batch(run.step, len(tok_tr), args.batch)
        C.set_lr(opt, C.lr_at(run.progress(), args.lr, args.warmup))
        vloss, ploss, _, _ = losses(base, drafter, tok_tr[i], lab_tr[i], args, cache=cache, idx=i)
        loss = args.v_w * vloss + args.p_w * ploss
        C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_value_(drafter.parameters(), 0.5))
        save = run.tick()
        if run.step % 10 == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} vloss {vloss.item():.4f} ploss {ploss.item():.4f} "
                    f"lr {opt.param_groups[0]['lr']:.2e} {sps:.2f} s/step progress {run.progress():.3f} "
                    f"compute {run.compute_s / 60:.1f} min")
            t_last, steps_last = time.time(), run.step
        if args.eval_every and run.step % args.eval_every == 0:
            drafter.eval()
            v = quick_val(base, drafter, tok_va[:args.val_batch], lab_va[:args.val_batch])
            drafter.train()
            tag = ""
            if v["top3"] > best:
                best = v["top3"]
                run.extra["best_top3"], run.extra["best_step"] = best, run.step
                torch.save({"model": drafter.state_dict(), "step": run.step, "val": v}, best_path + ".tmp")
                os.replace(best_path + ".tmp", best_path)
                tag = " (best)"
            run.log(f"step {run.step} val({args.val_batch} held-out, cond, teacher-forced): " +
                    " ".join(f"{k} {x:.4f}" for k, x in v.items()) + tag)
        if save:
            run.save(drafter, opt)
    run.save(drafter, opt)
    if os.path.exists(best_path):
        drafter.load_state_dict(torch.load(best_path, map_location="cpu")["model"])
    export(args, run, base, drafter.eval(), len(tok_tr), len(tok_va), tok_te, lab_te, samp, nparam)


def heads_or_none(args, kind):
    name = args.latent_heads if kind == "latent" else args.token_heads
    if not name:
        return None
    path = os.path.join(args.assets_dir, name + ".safetensors")
    return load_latent_heads(path) if kind == "latent" else load_token_heads(path)


# ----------------------------------------------------------------------------------------------
# export and card
# ----------------------------------------------------------------------------------------------
def results_tables(ev, samp):
    out = ""
    for mode, title in (("cfg", f"with the sampler's CFG {samp['cfg_scale']:g}, temperature "
                                f"{samp['temperature']:g} (as inference uses them)"),
                        ("cond", "conditional row only, no CFG, temperature 1")):
        out += (f"**{title}; targets inside the root's row (the spatial heads' targets)**\n\n"
                "| depth | targets | base top-1 | token head | acc | accept | latent head | acc | accept "
                "| EAGLE teacher-forced acc | accept | EAGLE free-running acc | accept |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for k in range(1, DEPTHS + 1):
            r = ev[("free", k, "row")]
            cells = [f"+{k}", str(r["n"]), f"{r['base_acc']:.3f}"]
            for fam, name in (("token", f"`h{k}`"), ("latent", f"`h^{k}`")):
                h = ev.get((fam, k, "row"))
                cells += [name, f"{h['acc_' + mode]:.3f}", f"{h['accept_' + mode]:.3f}"] if h else ["-", "-", "-"]
            for m in ("tf", "free"):
                e = ev[(m, k, "row")]
                cells += [f"{e['acc_' + mode]:.3f}", f"{e['accept_' + mode]:.3f}"]
            out += "| " + " | ".join(cells) + " |\n"
        out += "\n"
    out += ("**EAGLE drafter on all targets (row crossings included: raster chain drafting "
            "continues into the next row)**\n\n"
            "| depth | targets | base top-1 | teacher-forced acc (cfg) | accept (cfg) | free-running acc (cfg) "
            "| accept (cfg) | free acc (cond) | accept (cond) | free top-3 (cfg) |\n|---|---|---|---|---|---|---|---|---|---|\n")
    for k in range(1, DEPTHS + 1):
        t, f = ev[("tf", k, "all")], ev[("free", k, "all")]
        out += (f"| {k} | {f['n']} | {f['base_acc']:.3f} | {t['acc_cfg']:.3f} | {t['accept_cfg']:.3f} | "
                f"{f['acc_cfg']:.3f} | {f['accept_cfg']:.3f} | {f['acc_cond']:.3f} | {f['accept_cond']:.3f} | "
                f"{f['top3_cfg']:.3f} |\n")
    return out


def export(args, run, base, drafter, n_tr, n_va, tok_te, lab_te, samp, nparam):
    W, D = base.cfg.grid_size, base.cfg.dim
    ev = evaluate(base, drafter, tok_te, lab_te, samp, latent=heads_or_none(args, "latent"),
                  token=heads_or_none(args, "token"))
    evj = {"/".join(map(str, k)): v for k, v in ev.items()}
    run.log("eval " + json.dumps(evj))
    C.json_dump(os.path.join(run.dir, "eval.json"), evj)
    state = {EAGLE_PREFIX + k: v for k, v in C.fp16_export(drafter.state_dict()).items()}
    d16, _ = (EagleDrafter(base.cfg, args.n_layer, bool(args.embed_norm)), None)
    d16.load_state_dict({k[len(EAGLE_PREFIX):]: v.float() for k, v in state.items()})
    n16 = min(100, len(tok_te))
    e32 = evaluate(base, drafter, tok_te[:n16], lab_te[:n16], samp, depth=2)
    e16 = evaluate(base, d16.eval(), tok_te[:n16], lab_te[:n16], samp, depth=2)
    f16_note = (f"Shipped dtypes (F16 matrices) against f32 on {n16} test images, free-running accept "
                f"with CFG, all targets: depth 1 {e16[('free', 1, 'all')]['accept_cfg']:.4f} vs "
                f"{e32[('free', 1, 'all')]['accept_cfg']:.4f}, depth 2 {e16[('free', 2, 'all')]['accept_cfg']:.4f} "
                f"vs {e32[('free', 2, 'all')]['accept_cfg']:.4f}.")
    run.log(f16_note)
    meta = export_metadata(args, base)
    best = run.extra.get("best_step")
    base_path = os.path.join(args.assets_dir, args.name)
    C.write_card(base_path + ".md", f"{args.name}: EAGLE-style drafter for {args.base}", card_sections(
        args, run, W, D, nparam, n_tr, n_va, len(tok_te), samp, ev, meta, f16_note, best))
    save_file(state, base_path + ".safetensors", meta)  # last: marks the stage done
    run.log(f"exported {base_path}.safetensors (checkpoint of step {best if best else run.step})")


def export_metadata(args, base):
    meta = eagle_metadata(base.cfg, args.n_layer, bool(args.embed_norm))
    meta.update({"base": args.base,
                 "loss": f"smooth_l1_w{args.v_w:g}+soft_ce_w{args.p_w:g}",
                 "training_data": "self_distillation"})
    return meta


def cmdline():
    return C.cmdline().replace("OMP_NUM_THREADS=2", f"OMP_NUM_THREADS={torch.get_num_threads()}", 1)


def card_sections(args, run, W, D, nparam, n_tr, n_va, n_te, samp, ev, meta, f16_note, best):
    what = (
        "An EAGLE / EAGLE-2 drafter (Li et al. 2024), the drafter LANTERN (Jang et al., ICLR 2025) "
        "uses, for "
        f"{args.base} (tools/vkspec_models.py `EagleDrafter`): a one-layer autoregressive model over "
        "the target's features. Feature f(n) = the target's final hidden state after its final "
        "`norm` at the sequence position whose logits predict image token n (EAGLE's "
        "`hidden_states[-1]`, post-norm). Element j reads token j (sampled from f(j)) and f(j): "
        "x = fc([embed_norm(E(token j)); f(j)]) with E the target's frozen `tok_embeddings`, then one "
        "LlamaGen transformer block (no attention_norm, as EAGLE's first layer; causal attention, "
        f"the target's 2D RoPE at the position of token j), output g(j) = predicted f(j+1); draft "
        "logits for token j+1 = the target's frozen `output`(g(j)). Drafting a chain feeds g(j) as "
        f"the feature of element j+1. {nparam / 1e6:.3f}M parameters (the embedding and the output "
        "are the target's, not stored here).")
    training = (
        "Data (train and held-out test splits of the target's own samples, different seeds):\n\n"
        f"`OMP_NUM_THREADS=1 /usr/bin/python3 tools/ssd_distill_set.py --split test --images {n_te}`\n\n"
        f"`OMP_NUM_THREADS=1 /usr/bin/python3 tools/ssd_distill_set.py --split train --images {n_tr + n_va}`\n\n"
        f"Drafter:\n\n`{args.train_cmd or run.extra.get('cmd') or cmdline()}`\n\n"
        f"{n_tr} training images, the first {n_va} of the train split held out for model selection. "
        f"Batch {args.batch} images (255 drafter elements each), AdamW betas (0.9, 0.95), peak lr "
        f"{args.lr:g}, warmup {args.warmup:g} then cosine, gradient value clip 0.5; loss "
        f"{args.v_w:g} * smooth-L1(g(j), f(j+1)) + {args.p_w:g} * soft cross-entropy against the "
        f"target's distribution at j+1 (EAGLE's v_w / p_w); uniform feature noise of width "
        f"{args.noise:g} * 512 / 255 (EAGLE's); null class {args.null_p:g} of the time per image "
        f"(LANTERN). {run.summary()} on a shared CPU core; exported checkpoint: step "
        f"{best if best else run.step} (best held-out top-3 against the target's argmax, LANTERN's "
        "selection rule).\n\n"
        "Differences from LANTERN's recipe (ICLR 2025, appendix: 100k dataset images, batch 16, lr "
        "1e-4, 2000-step linear warmup, 20 epochs): self-generated data (as issue #18 asks, and "
        "the set the latent heads use; LANTERN used dataset images, citing EAGLE's finding "
        "that target-generated data helps marginally), a compute budget instead of 20 epochs with a "
        "higher lr and a cosine schedule, and `embed_norm` (EAGLE-3's input norm on the embedding: "
        "this target's embeddings have RMS ~0.03 against ~1.5 for its features).")
    res = results_tables(ev, samp)
    res += (f"\n{n_te} held-out self-generated images (test split). Depth k: the target has just "
            "sampled token n from f(n) (root n); the drafter's k-th chained proposal targets token "
            "n+k. `acc` = top-1 of the draft (CFG-combined logits where stated) against the token the "
            "target actually sampled at n+k; `accept` = E[sum_x min(p_draft(x), p_target(x))] against "
            "the target's distribution at n+k given the true prefix, i.e. the probability that the "
            "k-th proposal is accepted given the first k-1 were. Teacher-forced: every drafter element "
            "reads the target's true feature (an upper bound); free-running: elements after the root "
            "read the drafter's own predicted features (what chain drafting at inference sees; tokens "
            "are the target's samples in both). Token heads (`h1..h4`, assets/fmnist_gpt16_heads) and "
            "latent heads (`h^k`, assets/fmnist_gpt16_latent_heads) draft token n+k from f(n) alone, "
            "without token n; they are evaluated here on the same images and the same targets (inside "
            "the root's row). `base top-1` = the target's own argmax against its sample. For scale: LANTERN "
            "reports an average first-draft acceptance of 0.04 for EAGLE-2 on text-conditional LlamaGen "
            "(its Table 2); this small Fashion-MNIST target's next-token distributions are far less "
            "dispersed, and its drafter sees the token just sampled, which the heads do not.\n\n" + f16_note)
    dtypes = ("`eagle.embed_norm.weight` F32 [dim]; `eagle.fc.weight` F16 [dim, 2*dim] (columns "
              "0..dim-1 multiply embed_norm(E(token)), dim..2*dim-1 the feature), `eagle.fc.bias` F32 "
              "[dim]; per layer i: `eagle.layers.{i}.attention.wqkv.weight` F16 [3*dim, dim] (rows q, k, v; "
              "head h = rows h*head_dim..), `eagle.layers.{i}.attention.wo.weight` F16 [dim, dim], "
              "`eagle.layers.{i}.feed_forward.w1.weight` / `w3.weight` F16 [ffn_hidden, dim] "
              "(out = w2(SiLU(w1 x) * w3 x)), `eagle.layers.{i}.feed_forward.w2.weight` F16 [dim, "
              "ffn_hidden], `eagle.layers.{i}.ffn_norm.weight` F32 [dim]; layers after the first also "
              "have `attention_norm.weight` F32 [dim] (none with n_layer = 1).")
    contract = (
        "What the engine must compute (W = grid_size, N = W*W, E = the target's `tok_embeddings`, "
        "`output` = the target's output matrix):\n\n"
        "1. f(n) = the target's hidden state after its final `norm` at sequence position n "
        "(position 0 = the condition, position 1+m = image token m), i.e. the vector whose "
        "`output` logits give token n. The engine already has it (the verify pass).\n"
        "2. Drafter element j (0 <= j <= N-2), inputs token j and f(j): "
        "`e = RMSNorm(E[token j]) * eagle.embed_norm.weight` (eps `norm_eps`, f32), "
        "`x = eagle.fc.weight @ concat(e, f(j)) + eagle.fc.bias` (embedding first).\n"
        "3. Block (layer 0): `q, k, v = split(wqkv @ x)` (no attention_norm), 2D RoPE on q and k "
        "exactly as the target's at sequence index j + cls_token_num (row j / W, col j % W of "
        "token j), causal attention over the drafter's own elements 0..j (its own KV cache; "
        "scale 1/sqrt(head_dim)), `h = x + wo @ attn`, `g = h + w2 @ (SiLU(w1 @ n) * (w3 @ n))` "
        "with `n = RMSNorm(h) * ffn_norm.weight`. No final norm.\n"
        "4. g(j) predicts f(j+1): draft logits for token j+1 = `output @ g(j)` (with CFG: run "
        "steps 2-4 per CFG row on that row's features, then `u + cfg * (c - u)`, temperature as "
        "the target's).\n"
        "5. Chain: the next element j+1 reads (drafted token j+1, g(j)) in place of f(j+1); its "
        "key/value go into the drafter's cache after element j's. After verification, drop the "
        "cache entries of rejected elements and recompute the accepted ones from the target's "
        "true features; the element of the target's new token n (bonus or correction) reads "
        "the true f(n). Tree drafting (EAGLE-2) is the same step with a tree attention mask "
        "over drafted elements, each at the RoPE position of its own token.")
    return [("What", what), ("Forward contract", contract), ("Training", training), ("Results", res),
            ("Dtypes", dtypes), ("Metadata", C.fmt_meta(meta))]


if __name__ == "__main__":
    main()
