#!/usr/bin/env python3
"""The exact law of a tiny model's images under the engine's sampler, by enumeration: every one of
the V^N token grids gets its probability, the product over raster positions of
p(token | condition, tokens before it) with CFG, temperature and top-k applied as engine/ops/sampler.h does
them (steps 1-4: l = u + (c - u) * s, z = l / T, the top_k highest z kept with ties to the lower
index, softmax). The forward is the PyTorch reference in float64 (tools/vkspec_models.py for LlamaGen,
tools/janus_model.py for Janus-Pro), independent of the engine.
Used by tests/test_exact_law.cpp (the lossless methods' samples against this law) and to measure
the lossy methods' total variation from it.

  exact_law.py law --model TARGET.safetensors --label 0 --cfg 2 --temperature 0.8 --top-k 3 \\
      --out LAW.f64 [--stats STATS.json] [--min-gap 1e-4]
  exact_law.py law --model T2I.safetensors --caption 0.5,-1.2,... ...   (a LlamaGen t2i model and a
      caption filling its condition positions, cls_token_num x caption_dim values)
  exact_law.py law --janus FOLDER --ids 1,5,9,3 ...   (a Janus-Pro folder and its prompt's ids)
  exact_law.py law --lumina FOLDER --ids 0,5,8710,8197,8806,8806 ...   (a Lumina-mGPT folder and its
      condition's ids, BOS .. separator, image start, sizes; the unconditional stream the last three
      alone, and a line break fed after every row, as inference_solver.py runs it)
    LAW.f64: V^N little-endian float64, the grid (t_0 .. t_{N-1}) at index
    sum_n t_n V^(N-1-n) (raster order, first token most significant).
    STATS.json: "near_tie" (the smallest gap between the k-th and (k+1)-th guided logit over
    prefixes of probability > 1e-9: a gap near the engine's rounding would make the engine's
    top-k set differ from this one), "context_dependence" (per position n >= 1, the expectation
    over prefixes of the mean total variation between p(. | prefix) and p(. | prefix with the
    token at n - 1 replaced by each other value), "entropy" (mean entropy per position, nats).

  exact_law.py diagonal-floor LAW.f64 --vocab 4 --grid 3 [--images 20000]
    the law's ideal diagonal factorisation (each anti-diagonal's cells drawn independently given
    the earlier diagonals, the best FlashAR can do): its TV from the law, exactly and as that many
    samples of it measure it, and its largest pair marginal TV, as JSON.

Top-p is not supported: the engine's top-p is fixed-point (sampler.h step 5), the law's would be
exact; the tests run without it. Grids beyond 2^24 images are refused.
"""
import argparse
import json
import os
import sys

import numpy as np

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_file  # noqa: E402
from vkspec_models import GPT, gpt_config_from_metadata  # noqa: E402

MAX_IMAGES = 1 << 24


class PrefixTree:
    """The guided-free logits of the next token after every prefix of one depth, depth by depth:
    the KV cache of depth d - 1's prefixes is repeated V times (each prefix's V children) and only
    the new token runs, so the whole tree costs one token row per prefix and CFG row.
    family: hidden(x, pos, caches), embed_image(tokens) -> [B, dim], logits(h), layers (count)."""

    def __init__(self, family, condition_rows, vocab):
        self.f, self.V = family, vocab
        self.caches = [dict() for _ in range(family.layers)]
        self.x = condition_rows  # [2, L, dim]: the (cond, uncond) condition positions
        self.pos = torch.arange(condition_rows.shape[1])

    @torch.no_grad()
    def next_logits(self, last=False):
        """Logits [2, V^d, V] (cond, uncond) after every prefix of the current depth d, rows in
        prefix index order; then steps to depth d + 1 (unless last)."""
        f = self.f
        h = f.hidden(self.x, self.pos, self.caches)[:, -1]
        logits = f.logits(h).double()
        P = logits.shape[0] // 2
        if last:
            return logits.reshape(2, P, self.V).numpy()
        for c in self.caches:  # rows [cond prefixes; uncond prefixes] -> each repeated V times
            for k in c:
                c[k] = c[k].repeat_interleave(self.V, dim=0)
        self.x = f.embed_image(torch.arange(self.V).repeat(2 * P)).unsqueeze(1)
        self.pos = self.pos[-1:] + 1
        return logits.reshape(2, P, self.V).numpy()


class LlamaGenFamily:
    """tools/vkspec_models.py's GPT from a vkspec safetensors file, in float64: c2i with a class
    (the null class its CFG row), or t2i with a caption filling every condition position (the
    model's null caption its CFG row; no padding, so attention stays plainly causal)."""

    def __init__(self, path):
        tensors, meta = load_file(path)
        self.cfg = cfg = gpt_config_from_metadata(meta)
        self.m = GPT(cfg).double().eval()
        null = tensors.get("cls_embedding.uncond_embedding")
        if null is not None:  # checkpoints keep as many null-caption rows as they were made with
            self.m.cls_embedding.uncond_embedding = torch.zeros(null.shape, dtype=torch.float64)
        self.m.load_state_dict({k: v.double() for k, v in tensors.items()})
        self.vocab, self.tokens, self.layers = cfg.vocab_size, cfg.grid_size ** 2, cfg.n_layer

    def condition_rows(self, condition):
        cfg = self.cfg
        if cfg.model_type == "c2i":
            return self.m.embed(None, torch.tensor([condition, cfg.num_classes], dtype=torch.long))
        caption = torch.tensor(condition, dtype=torch.float64)
        if caption.numel() != cfg.cls_token_num * cfg.caption_dim:
            raise SystemExit(f"--caption has {caption.numel()} values; the model takes {cfg.cls_token_num} x "
                             f"{cfg.caption_dim}")
        null = self.m.cls_embedding.uncond_embedding[:cfg.cls_token_num]
        return self.m.embed(None, torch.stack([caption.reshape(cfg.cls_token_num, -1), null]))

    def hidden(self, x, pos, caches):
        return self.m.hidden(x, pos, caches=caches)

    def embed_image(self, tokens):
        return self.m.tok_embeddings(tokens)

    def logits(self, h):
        return self.m.output(h)


class JanusFamily:
    """tools/janus_model.py's JanusGen from a released-layout checkpoint folder, in float64; the
    condition is Janus's prompt ids and its unconditional row (all but the first and last ids
    replaced by the pad token)."""

    def __init__(self, folder):
        import janus_model as jm
        self.jm = jm
        m, _ = jm.load_checkpoint_folder(folder, quiet=True)
        self.m = m.double().eval()
        self.pad = jm.tokenizer_ids(folder)["pad_id"]
        self.vocab, self.tokens, self.layers = m.cfg.image_vocab, m.cfg.grid ** 2, len(m.trunk.layers)

    def condition_rows(self, ids):
        ids = torch.tensor(ids, dtype=torch.long)
        return self.m.embed_text(torch.stack([ids, self.jm.uncond_ids(ids, self.pad)]))

    def hidden(self, x, pos, caches):
        return self.m.hidden(x, pos, caches=caches)

    def embed_image(self, tokens):
        return self.m.embed_image(tokens)

    def logits(self, h):
        return self.m.gen_head(h)


class LuminaFamily:
    """tools/lumina_model.py's LuminaGen from a released-layout folder, in float64, with a prefix
    tree of its own: the two CFG streams differ in length (the unconditional one is the image
    start and size tokens alone), and a row's last token is followed by a line break."""

    def __init__(self, folder):
        import lumina_model as lm
        self.lm = lm
        self.m = lm.load_checkpoint_folder(folder).double().eval()
        self.vocab, self.layers = self.m.cfg.image_codes, self.m.cfg.n_layer
        self.rows = self.cols = 0
        self.tokens = 0

    def set_grid(self, ids):
        """The grid from the condition's size tokens (height, width: the last two ids)."""
        h, w = ((i - self.lm.SIZE_BASE) * 2 for i in ids[-2:])
        self.rows, self.cols, self.tokens = h, w, h * w

    def logits(self, ids, pos, caches):
        m, lm = self.m, self.lm
        x = m.model.embed_tokens(ids)
        cos, sin = lm.rope_cos_sin(pos, m.cfg.head_dim, m.cfg.rope_theta)
        for i, layer in enumerate(m.model.layers):
            x = layer(x, cos.double(), sin.double(), None, caches[i])
        image = slice(lm.IMAGE_FIRST, lm.IMAGE_FIRST + self.vocab)
        return m.lm_head(m.model.norm(x[:, -1]))[:, image]

    def prefix_tree(self, ids):
        return LuminaTree(self, ids)


class LuminaTree:
    """PrefixTree's walk for LuminaFamily: each stream its own caches and positions."""

    def __init__(self, family, ids):
        self.f, self.V, self.depth = family, family.vocab, 0
        streams = [list(ids), list(ids[-3:])]
        self.caches = [[dict() for _ in range(family.layers)] for _ in streams]
        self.ids = [torch.tensor([s]) for s in streams]
        self.pos = [torch.arange(len(s)) for s in streams]

    @torch.no_grad()
    def next_logits(self, last=False):
        f, lm, V = self.f, self.f.lm, self.V
        out = [f.logits(self.ids[r], self.pos[r], self.caches[r]) for r in range(2)]
        P = out[0].shape[0]
        if not last:
            fed = torch.arange(V).repeat(P) + lm.IMAGE_FIRST
            ids = fed[:, None]
            if self.depth % f.cols == f.cols - 1:  # the row's last token, then its break
                ids = torch.cat([ids, torch.full_like(ids, lm.LINE_BREAK)], dim=1)
            for r in range(2):
                for c in self.caches[r]:
                    for k in c:
                        c[k] = c[k].repeat_interleave(V, dim=0)
                self.ids[r] = ids
                self.pos[r] = self.pos[r][-1] + 1 + torch.arange(ids.shape[1])
        self.depth += 1
        return torch.stack(out).numpy()


def sampler_probs(cond, uncond, cfg, temperature, top_k):
    """engine/ops/sampler.h steps 1-4 in float64; returns (probs [P, V], k-th minus (k+1)-th z)."""
    logits = uncond + (cond - uncond) * cfg if cfg > 1.0 else cond
    z = logits * (1.0 / max(temperature, 1e-5))
    P, V = z.shape
    order = np.argsort(-z, axis=1, kind="stable")  # descending, ties to the lower index
    keep = np.ones_like(z, dtype=bool)
    gap = np.full(P, np.inf)
    if 0 < top_k < V:
        keep[:] = False
        np.put_along_axis(keep, order[:, :top_k], True, axis=1)
        ranked = np.take_along_axis(z, order, axis=1)
        gap = ranked[:, top_k - 1] - ranked[:, top_k]
    e = np.where(keep, np.exp(z - z.max(axis=1, keepdims=True)), 0.0)
    return e / e.sum(axis=1, keepdims=True), gap


def enumerate_law(family, condition, guidance, temperature, top_k):
    """Returns (law [V^N], per-depth conditional tables [V^d, V], min near-tie gap)."""
    V, N = family.vocab, family.tokens
    if V ** N > MAX_IMAGES:
        raise SystemExit(f"{V}^{N} images is more than exact_law.py enumerates ({MAX_IMAGES})")
    tree = family.prefix_tree(condition) if hasattr(family, "prefix_tree") else \
        PrefixTree(family, family.condition_rows(condition), V)
    law = np.ones(1)
    tables, min_gap = [], np.inf
    for d in range(N):
        lg = tree.next_logits(last=d == N - 1)
        p, gap = sampler_probs(lg[0], lg[1], guidance, temperature, top_k)
        live = law > 1e-9
        if live.any():
            min_gap = min(min_gap, float(gap[live].min()))
        tables.append(p)
        law = (law[:, None] * p).reshape(-1)
    return law, tables, min_gap


def context_dependence(law, tables, V):
    """Per position n >= 1: E over prefixes of mean_{v' != v} TV(p(.|..v), p(.|..v'))."""
    out = []
    for d in range(1, len(tables)):
        p = tables[d].reshape(-1, V, V)  # [prefix without the last token, last token, next]
        w = law_of_prefixes(law, V, d).reshape(-1, V)
        tv = 0.5 * np.abs(p[:, :, None, :] - p[:, None, :, :]).sum(-1)  # [.., v, v']
        mean_tv = tv.sum(-1) / (V - 1)
        out.append(float((w * mean_tv).sum()))
    return out


def law_of_prefixes(law, V, d):
    N = round(np.log(law.size) / np.log(V))
    return law.reshape(V ** d, V ** (N - d)).sum(axis=1)


def cmd_law(a):
    torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
    if sum(bool(x) for x in (a.model, a.janus, a.lumina)) != 1:
        raise SystemExit("exact_law.py law: give --model (LlamaGen), --janus (a Janus-Pro folder) or --lumina "
                         "(a Lumina-mGPT folder)")
    family = LlamaGenFamily(a.model) if a.model else JanusFamily(a.janus) if a.janus else LuminaFamily(a.lumina)
    if a.lumina:
        condition = [int(v) for v in a.ids.split(",")]
        family.set_grid(condition)
    elif a.janus:
        condition = [int(v) for v in a.ids.split(",")]
    elif family.cfg.model_type == "t2i":
        if not a.caption:
            raise SystemExit(f"{a.model} is a text-to-image model: give --caption")
        condition = [float(v) for v in a.caption.split(",")]
    else:
        condition = a.label
    law, tables, gap = enumerate_law(family, condition, a.cfg, a.temperature, a.top_k)
    V = family.vocab
    law.astype("<f8").tofile(a.out)
    entropy = []
    for d, p in enumerate(tables):
        w = law_of_prefixes(law, V, d)
        h = -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1)
        entropy.append(float((w * h).sum()))
    stats = {"images": int(law.size), "vocab": V, "tokens": family.tokens, "sum": float(law.sum()),
             "near_tie": gap, "context_dependence": context_dependence(law, tables, V), "entropy": entropy,
             "max_image_probability": float(law.max())}
    source = a.model or a.janus or a.lumina
    if gap < a.min_gap:
        raise SystemExit(f"{source}: the k-th and (k+1)-th guided logits of a reachable prefix are {gap:.2e} apart, "
                         f"under --min-gap {a.min_gap:g}: the engine's rounding could pick another top-k set there")
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(stats, f, indent=1)
            f.write("\n")
    print(json.dumps(stats))


def diagonal_law(P, grid):
    """The law's ideal diagonal factorisation Q(x) = prod_d prod_{c on d} P(x_c | cells of diagonals
    < d): what a decoder drawing each anti-diagonal's cells independently given the earlier ones
    (FlashAR) gives at best. P: the law as an array with one axis per raster cell."""
    n = grid * grid
    diag = [i // grid + i % grid for i in range(n)]
    Q = np.ones_like(P)
    for d in range(2 * grid - 1):
        prev = [i for i in range(n) if diag[i] < d]
        base = P.sum(axis=tuple(i for i in range(n) if i not in prev), keepdims=True)
        for c in (i for i in range(n) if diag[i] == d):
            marg = P.sum(axis=tuple(i for i in range(n) if i not in prev + [c]), keepdims=True)
            Q = Q * np.divide(marg, base, out=np.zeros_like(marg), where=base > 0)
    return Q


def cmd_diagonal_floor(a):
    P = np.fromfile(a.law, dtype="<f8")
    n = a.grid * a.grid
    if P.size != a.vocab ** n:
        raise SystemExit(f"diagonal-floor: {a.law} holds {P.size} values, not {a.vocab}^{n}")
    P = P.reshape([a.vocab] * n)
    Q = diagonal_law(P, a.grid)
    rng = np.random.default_rng(a.seed)
    sampled = [0.5 * np.abs(rng.multinomial(a.images, Q.ravel() / Q.sum()) / a.images - P.ravel()).sum()
               for _ in range(a.repeats)]
    pairs = {(i, j): 0.5 * np.abs(P.sum(axis=tuple(k for k in range(n) if k not in (i, j))) -
                                  Q.sum(axis=tuple(k for k in range(n) if k not in (i, j)))).sum()
             for i in range(n) for j in range(i + 1, n)}
    (i, j), worst = max(pairs.items(), key=lambda kv: kv[1])
    print(json.dumps({"tv": float(0.5 * np.abs(P - Q).sum()), "tv_sampled": float(np.mean(sampled)),
                      "images": a.images, "largest_pair": [i, j], "largest_pair_tv": float(worst)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("law")
    p.add_argument("--model", help="a LlamaGen c2i model (vkspec safetensors)")
    p.add_argument("--label", type=int, default=0, help="--model's class (c2i)")
    p.add_argument("--caption", help="--model's caption (t2i): cls_token_num x caption_dim values, row-major")
    p.add_argument("--janus", help="a Janus-Pro checkpoint folder (the released layout)")
    p.add_argument("--lumina", help="a Lumina-mGPT checkpoint folder (the released layout)")
    p.add_argument("--ids", help="--janus's prompt ids, comma-separated (BOS first, <begin_of_image> last), or "
                                 "--lumina's condition ids (BOS .. separator, image start, height, width)")
    p.add_argument("--cfg", type=float, default=1.0)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--stats")
    p.add_argument("--min-gap", type=float, default=0.0,
                   help="fail when a reachable prefix's top-k cut is nearer a tie than this")
    f = sub.add_parser("diagonal-floor", help="the TV of the law's ideal diagonal factorisation (FlashAR's floor)")
    f.add_argument("law", help="LAW.f64 written by `law`")
    f.add_argument("--vocab", type=int, required=True)
    f.add_argument("--grid", type=int, required=True)
    f.add_argument("--images", type=int, default=20000, help="also the TV of that many samples of it (with noise)")
    f.add_argument("--repeats", type=int, default=5)
    f.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    cmd_law(a) if a.cmd == "law" else cmd_diagonal_floor(a)


if __name__ == "__main__":
    main()
