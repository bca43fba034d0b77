"""PyTorch definitions of every model vkspec ships, written to match LlamaGen's checkpoints.

The C++ engine reimplements these; `tools/reference.py` uses them for parity tests. Parameter
names follow LlamaGen's state dicts so a converted LlamaGen checkpoint and our small models
load through the same code. Hyperparameters travel in the safetensors `__metadata__` (see
tools/README.md); `*_from_metadata` / `*_metadata` are the only places that map between them.

Contents:
  GPT          class-conditional LlamaGen transformer (c2i) + 2D RoPE + `generate()` with CFG
  DraftHeads   Medusa-style spatial heads on the GPT's final normalised hidden state
  LatentHeads  SSD-style heads predicting neighbouring positions' hidden states (not tokens)
  EagleDrafter EAGLE-style one-layer drafter (LANTERN's drafter): fc([token embedding; feature])
               -> one LlamaGen block over the drafted sequence -> the next position's feature
  VQModel      LlamaGen VQ tokenizer (encoder, L2-normalised codebook, decoder)
  Classifier   small CNN for 32x32 Fashion-MNIST, penultimate features used for FID
"""
import math
from dataclasses import dataclass, field, asdict
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def find_multiple(n: int, k: int) -> int:
    return n if n % k == 0 else n + k - (n % k)


# ----------------------------------------------------------------------------------------------
# GPT
# ----------------------------------------------------------------------------------------------
@dataclass
class GPTConfig:
    dim: int = 256
    n_layer: int = 6
    n_head: int = 4
    vocab_size: int = 1024
    num_classes: int = 10
    grid_size: int = 16
    cls_token_num: int = 1
    model_type: str = "c2i"  # or "t2i": the condition positions embed caption embeddings
    caption_dim: int = 0     # t2i: text-encoder width (LlamaGen: 2048)
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    multiple_of: int = 256
    ffn_hidden_size: int = 0  # 0: LlamaGen's rule from dim and multiple_of (metadata "ffn_hidden" sets it)
    # training-only knobs (not needed for inference, not in metadata)
    class_dropout: float = 0.1
    token_dropout: float = 0.0
    resid_dropout: float = 0.0

    @property
    def head_dim(self):
        return self.dim // self.n_head

    @property
    def ffn_hidden(self):
        if self.ffn_hidden_size:
            return self.ffn_hidden_size
        return find_multiple(int(2 * 4 * self.dim / 3), self.multiple_of)

    @property
    def block_size(self):
        return self.grid_size * self.grid_size


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()  # always normalise in f32, like LlamaGen
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


def rope_table_2d(grid_size, head_dim, base=10000.0, cls_token_num=1):
    """[cls_token_num + grid^2, head_dim/2, 2] of (cos, sin).

    Pair i of a head vector is (x[2i], x[2i+1]). Pairs 0..d/4-1 rotate by the token's grid row,
    pairs d/4..d/2-1 by its column, with frequency 1/base^(2j/(d/2)) for j < d/4. Condition
    positions get cos = sin = 0, so q and k there are zero (as in LlamaGen).
    """
    half = head_dim // 2
    freqs = 1.0 / (base ** (torch.arange(0, half, 2)[: half // 2].float() / half))
    t = torch.arange(grid_size).float()
    f = torch.outer(t, freqs)  # [grid, d/4]
    grid = torch.cat([f[:, None, :].expand(-1, grid_size, -1),   # row angle
                      f[None, :, :].expand(grid_size, -1, -1)],  # column angle
                     dim=-1)  # [row, col, d/2]
    tab = torch.stack([torch.cos(grid), torch.sin(grid)], dim=-1).flatten(0, 1)
    return torch.cat([torch.zeros(cls_token_num, half, 2), tab])


def apply_rope(x, tab):
    """x [B, S, H, D], tab [B or 1, S, D/2, 2] -> rotated x (computed in f32)."""
    xs = x.float().reshape(*x.shape[:-1], -1, 2)
    c, s = tab[..., 0].unsqueeze(2), tab[..., 1].unsqueeze(2)
    out = torch.stack([xs[..., 0] * c - xs[..., 1] * s,
                       xs[..., 1] * c + xs[..., 0] * s], dim=-1)
    return out.flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.head_dim, self.dim = cfg.n_head, cfg.head_dim, cfg.dim
        self.wqkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.drop = nn.Dropout(cfg.resid_dropout)

    def forward(self, x, rope, mask=None, cache=None):
        B, S, _ = x.shape
        q, k, v = self.wqkv(x).split(self.dim, dim=-1)
        q = apply_rope(q.view(B, S, self.n_head, self.head_dim), rope).transpose(1, 2)
        k = apply_rope(k.view(B, S, self.n_head, self.head_dim), rope).transpose(1, 2)
        v = v.view(B, S, self.n_head, self.head_dim).transpose(1, 2)
        if cache is not None:  # simple append-only cache: dict with 'k','v' [B,H,T,D]
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        if mask is None:
            T = k.shape[2]
            mask = torch.ones(S, T, dtype=torch.bool, device=x.device).tril(T - S)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, S, self.dim)
        return self.drop(self.wo(y))


class FeedForward(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        h = cfg.ffn_hidden
        self.w1 = nn.Linear(cfg.dim, h, bias=False)
        self.w3 = nn.Linear(cfg.dim, h, bias=False)
        self.w2 = nn.Linear(h, cfg.dim, bias=False)
        self.drop = nn.Dropout(cfg.resid_dropout)

    def forward(self, x):
        return self.drop(self.w2(F.silu(self.w1(x)) * self.w3(x)))


class TransformerBlock(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.attention = Attention(cfg)
        self.feed_forward = FeedForward(cfg)
        self.attention_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)

    def forward(self, x, rope, mask=None, cache=None):
        h = x + self.attention(self.attention_norm(x), rope, mask, cache)
        return h + self.feed_forward(self.ffn_norm(h))


class LabelEmbedder(nn.Module):
    def __init__(self, num_classes, dim, dropout):
        super().__init__()
        self.embedding_table = nn.Embedding(num_classes + 1, dim)  # last row: null class (CFG)
        self.num_classes, self.dropout = num_classes, dropout

    def forward(self, labels, train=False):
        if train and self.dropout > 0:
            drop = torch.rand(labels.shape[0], device=labels.device) < self.dropout
            labels = torch.where(drop, torch.full_like(labels, self.num_classes), labels)
        return self.embedding_table(labels).unsqueeze(1)


class CaptionEmbedder(nn.Module):
    """LlamaGen's t2i condition: an MLP (fc1, tanh-GELU, fc2, no biases) on caption embeddings.
    The null caption (CFG) is a learned [120, caption_dim] buffer, 120 rows whatever
    cls_token_num is; the model keeps the first cls_token_num embedded positions."""

    def __init__(self, caption_dim, dim, uncond_tokens=120):
        super().__init__()
        self.cap_proj = nn.Sequential()
        self.cap_proj.add_module("fc1", nn.Linear(caption_dim, dim, bias=False))
        self.cap_proj.add_module("act", nn.GELU(approximate="tanh"))
        self.cap_proj.add_module("fc2", nn.Linear(dim, dim, bias=False))
        self.register_buffer("uncond_embedding", torch.randn(uncond_tokens, caption_dim) / caption_dim ** 0.5)

    def forward(self, caption, train=False):
        """caption [B, tokens, caption_dim], None rows not supported: pass null_caption() there."""
        return self.cap_proj(caption)

    def null_caption(self, batch):
        return self.uncond_embedding.unsqueeze(0).expand(batch, -1, -1)


def caption_attention_mask(emb_mask, seq_len):
    """LlamaGen's generation mask: causal, caption padding (emb_mask 0, [B, cls]) hidden from every
    query but itself. Returns bool [B, 1, S, S], True = attend."""
    B, n = emb_mask.shape
    m = torch.ones(seq_len, seq_len, dtype=torch.bool).tril().unsqueeze(0).repeat(B, 1, 1)
    m[:, :, :n] &= emb_mask.bool().unsqueeze(1)
    m |= torch.eye(seq_len, dtype=torch.bool).unsqueeze(0)
    return m.unsqueeze(1)


class GPT(nn.Module):
    """LlamaGen transformer, class- (c2i) or text-conditional (t2i).

    Sequence positions 0..cls_token_num-1 are the condition (c2i: one class embedding; t2i: the
    caption MLP's output, captions right-aligned with padding first); position cls_token_num+n
    holds image token n (raster order, n = row*W + col). Logits at position cls_token_num-1+i
    predict image token i, and the last image token is never fed.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.dim % cfg.n_head == 0
        assert (cfg.model_type == "c2i" and cfg.cls_token_num == 1) or cfg.model_type == "t2i"
        self.cfg = cfg
        if cfg.model_type == "c2i":
            self.cls_embedding = LabelEmbedder(cfg.num_classes, cfg.dim, cfg.class_dropout)
        else:
            self.cls_embedding = CaptionEmbedder(cfg.caption_dim, cfg.dim)
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.tok_dropout = nn.Dropout(cfg.token_dropout)
        self.layers = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg.n_layer)])
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.register_buffer("rope", rope_table_2d(cfg.grid_size, cfg.head_dim, cfg.rope_base,
                                                   cfg.cls_token_num), persistent=False)
        self.apply(self._init)
        nn.init.zeros_(self.output.weight)  # LlamaGen starts from uniform logits

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def embed(self, tokens=None, labels=None):
        """Condition embedding (if labels: class ids [B], or t2i captions [B, >= cls, caption_dim])
        followed by token embeddings (if tokens)."""
        parts = []
        if labels is not None:
            parts.append(self.cls_embedding(labels, train=self.training)[:, :self.cfg.cls_token_num])
        if tokens is not None:
            parts.append(self.tok_embeddings(tokens))
        return self.tok_dropout(torch.cat(parts, dim=1))

    def hidden(self, x, pos, mask=None, caches=None):
        """Core forward on embeddings x [B,S,D]. pos [S] or [B,S]: sequence positions (0 = cond,
        1+n = image token n) used to index RoPE. mask: bool [S,T] or [B,1,S,T], True = attend
        (default causal). Returns the final hidden state AFTER `norm` (what `output` reads)."""
        rope = self.rope[pos]
        if rope.dim() == 3:
            rope = rope.unsqueeze(0)
        for i, layer in enumerate(self.layers):
            x = layer(x, rope, mask, None if caches is None else caches[i])
        return self.norm(x)

    def forward(self, tokens, labels):
        """Training / teacher-forced path. tokens [B,N] (all image tokens), labels [B].
        Returns (logits [B,N,V] where logits[:,n] predicts tokens[:,n], normed hidden [B,N,D])."""
        x = self.embed(tokens[:, :-1], labels)
        pos = torch.arange(x.shape[1], device=x.device)
        h = self.hidden(x, pos)
        return self.output(h).float(), h

    @torch.no_grad()
    def generate(self, labels, cfg_scale=4.0, temperature=1.0, top_k=0, top_p=1.0,
                 generator=None):
        """Vanilla AR sampling with a KV cache. CFG (if cfg_scale > 1) runs the batch as
        [cond; uncond] and uses logits = u + s * (c - u)."""
        self.eval()
        B, N = labels.shape[0], self.cfg.block_size
        use_cfg = cfg_scale > 1.0
        lab = torch.cat([labels, torch.full_like(labels, self.cfg.num_classes)]) if use_cfg else labels
        caches = [dict() for _ in self.layers]
        x = self.embed(labels=lab)
        out = torch.empty(B, N, dtype=torch.long, device=labels.device)
        for n in range(N):
            pos = torch.tensor([n], device=labels.device)  # cond is pos 0, token n-1 is pos n
            logits = self.output(self.hidden(x, pos, caches=caches)[:, -1]).float()
            out[:, n], x = self.sample_next(logits, cfg_scale, temperature, top_k, top_p, generator)
        return out

    def sample_next(self, logits, cfg_scale, temperature, top_k, top_p, generator):
        """One sampling step after a forward: the tokens drawn from logits (with CFG, cfg_scale > 1:
        rows [cond; uncond] mixed as u + s * (c - u)) and their embedding, the next step's input
        (both CFG rows). Returns (tokens [B], next input [R, 1, dim])."""
        use_cfg = cfg_scale > 1.0
        if use_cfg:
            c, u = logits.chunk(2)
            logits = u + cfg_scale * (c - u)
        tok = sample_logits(logits, temperature, top_k, top_p, generator)
        return tok, self.tok_embeddings(torch.cat([tok, tok]) if use_cfg else tok).unsqueeze(1)


def filter_logits(logits, top_k=0, top_p=1.0):
    """LlamaGen / HF semantics: top-k keeps logits >= k-th largest; top-p then drops sorted
    tokens whose cumulative probability (of the top-k-filtered distribution) exceeds top_p,
    always keeping the first token that crosses the threshold."""
    logits = logits.clone()
    if top_k > 0:
        k = min(top_k, logits.shape[-1])
        kth = torch.topk(logits, k)[0][..., -1:]
        logits[logits < kth] = float("-inf")
    if top_p < 1.0:
        srt, idx = torch.sort(logits, descending=True)
        remove = srt.softmax(-1).cumsum(-1) > top_p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        logits[remove.scatter(-1, idx, remove)] = float("-inf")
    return logits


def sample_logits(logits, temperature=1.0, top_k=0, top_p=1.0, generator=None):
    probs = filter_logits(logits / max(temperature, 1e-5), top_k, top_p).softmax(-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


GPT_META = ["dim", "n_layer", "n_head", "vocab_size", "num_classes", "grid_size",
            "cls_token_num", "rope_base", "norm_eps", "multiple_of"]


def gpt_metadata(cfg: GPTConfig):
    m = {k: str(getattr(cfg, k)) for k in GPT_META}
    if cfg.model_type == "t2i":
        m.update({"model_type": "t2i", "caption_dim": str(cfg.caption_dim)})
    m.update({"vkspec.kind": "gpt", "n_kv_head": str(cfg.n_head), "head_dim": str(cfg.head_dim),
              "ffn_hidden": str(cfg.ffn_hidden), "block_size": str(cfg.block_size)})
    return m


def gpt_config_from_metadata(m):
    kw = {k: (float(m[k]) if k in ("rope_base", "norm_eps") else int(m[k])) for k in GPT_META if k in m}
    if m.get("model_type", "c2i") == "t2i":
        kw.update(model_type="t2i", caption_dim=int(m["caption_dim"]))
    if "ffn_hidden" in m:
        kw.update(ffn_hidden_size=int(m["ffn_hidden"]))
    return GPTConfig(**kw)


# ----------------------------------------------------------------------------------------------
# Draft heads
# ----------------------------------------------------------------------------------------------
DRAFT_HEAD_NAMES = ["h1", "h2", "h3", "h4", "v1", "v2"]


def draft_head_offsets(grid_size):
    """Offset of each head's target relative to the base model's next token (raster index)."""
    W = grid_size
    return {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "v1": W, "v2": 2 * W}


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim, bias=True)
        nn.init.zeros_(self.linear.weight)  # starts as identity: head == base prediction

    def forward(self, x):
        return x + F.silu(self.linear(x))


class DraftHeads(nn.Module):
    """Spatial draft heads (Medusa / Hawk style) on a frozen GPT.

    Placement contract (the C++ engine must reproduce it exactly):
      * Input: h = the base GPT's final hidden state AFTER its final `norm` (the very vector the
        base `output` projection reads), at any sequence position i.
      * Head k computes  logits_k = output( h + SiLU(W_k h + b_k) )  with the base model's own
        frozen `output` weight (shared, not stored in the heads file). No extra norm.
      * At position i the base logits predict image token n = i (position 0 = condition predicts
        token 0; position 1+m holds token m). Head hj predicts token n + j (j = 1..4, same row,
        to the right); head v1 predicts token n + W and v2 token n + 2W (same column, below),
        where W = grid_size.
      * Training skipped targets that leave the row (col(n) + j >= W for hj) or the grid
        (row(n) + r >= W for vr), so those predictions are untrained and should not be proposed.
    """

    def __init__(self, dim, names=DRAFT_HEAD_NAMES):
        super().__init__()
        self.names = list(names)
        self.draft_heads = nn.ModuleDict({n: ResBlock(dim) for n in self.names})

    def forward(self, h, output):
        """h [B,S,D] normed hidden; output: the base nn.Linear. Returns {name: logits}."""
        return {n: output(blk(h)).float() for n, blk in self.draft_heads.items()}


# ----------------------------------------------------------------------------------------------
# Latent heads (SSD, Xiang et al. 2026)
# ----------------------------------------------------------------------------------------------
LATENT_HEAD_NAMES = ["h", "v"]


def latent_head_offsets(grid_size):
    """Raster offset one application of each latent head moves: h one column right, v one row down."""
    return {"h": 1, "v": grid_size}


class LatentMLP(nn.Module):
    """y = x + fc2(SiLU(fc1(x))), both with biases; fc2 starts at zero, so y = x at init."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, bias=True)
        self.fc2 = nn.Linear(hidden, dim, bias=True)
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x):
        return x + self.fc2(F.silu(self.fc1(x)))


class LatentHeads(nn.Module):
    """SSD-style latent heads on a frozen GPT: they predict hidden states, not tokens.

    Contract (the C++ engine must reproduce it):
      * h(n) = the base GPT's final hidden state AFTER its final `norm` at the sequence position
        whose base logits predict image token n (the vector `output` reads).
      * Head `h` maps h(n) to a prediction of h(n+1) (next column), head `v` maps h(n) to a
        prediction of h(n+W) (next row, same column). Each head is `depth` LatentMLP blocks.
      * The heads are applied recursively in latent space: h^k(h(n)) predicts h(n+k), v^r(h(n))
        predicts h(n+rW); a predicted state is a valid input. Training unrolled h up to
        `rollout_h` steps within a row and v up to `rollout_v` rows (see the asset metadata).
      * Token logits for a predicted state come from the base model's frozen `output`
        (and CFG combines the conditional and unconditional rows' logits like the base's).
    """

    def __init__(self, dim, hidden, depth=1, names=LATENT_HEAD_NAMES):
        super().__init__()
        self.names = list(names)
        self.latent_heads = nn.ModuleDict(
            {n: nn.Sequential(*[LatentMLP(dim, hidden) for _ in range(depth)]) for n in self.names})

    def forward(self, name, h, steps=1):
        """Apply head `name` `steps` times to h [..., D]; returns the last prediction."""
        for _ in range(steps):
            h = self.latent_heads[name](h)
        return h


# ----------------------------------------------------------------------------------------------
# EAGLE-style drafter (Li et al. 2024, EAGLE / EAGLE-2; the drafter LANTERN uses)
# ----------------------------------------------------------------------------------------------
class EagleDrafter(nn.Module):
    """One-layer autoregressive feature drafter on a frozen GPT (EAGLE / EAGLE-2, as in LANTERN).

    Contract (the C++ engine must reproduce it exactly):
      * Feature f(n) = the target's final hidden state AFTER its final `norm` at the sequence
        position whose target logits predict image token n (the vector `output` reads; EAGLE's
        `hidden_states[-1]` of a Hugging Face model, which is post-norm). Sequence position 0 is
        the condition, so f(0) is the state at the condition position and f(n) for n >= 1 is
        the state at the position holding token n-1.
      * Drafter element j (j = 0 .. N-2) reads the pair (token j, f(j)): the token the target
        sampled from f(j) and the feature that sampled it (EAGLE pairs hidden state i with
        token i+1 in LLM indexing, i.e. the token that state predicted). Its input is
            x_j = fc([embed_norm(E(token j)) ; f(j)])     fc: Linear(2*dim -> dim, with bias)
        with E = the target's own frozen `tok_embeddings` (not stored in the drafter file) and
        the embedding FIRST in the concatenation (EAGLE's order), so fc.weight[:, :dim] multiplies
        the embedding and fc.weight[:, dim:] the feature. `embed_norm` is an RMSNorm (target's
        eps, learned weight) as in EAGLE-3's input_layernorm on the embedding; EAGLE-1/2 feed the
        raw embedding (embed_norm=False: identity). Our target's embeddings have RMS ~0.03
        against ~1.5 for its features, so unnormalised they barely reach fc in a short run.
      * x then goes through `n_layer` (= 1) LlamaGen TransformerBlock(s) with the target's
        shapes (heads, head_dim, SwiGLU FFN width, RMSNorm eps), EXCEPT that the first block has
        no `attention_norm` (EAGLE's layer 0 has no input_layernorm): y = x + Attn(x);
        out = y + FFN(ffn_norm(y)). Causal attention over drafter elements 0..j, 2D RoPE from the
        target's table at sequence index j+1 (the target's position that holds token j: row
        j // W, column j % W), so relative offsets between elements are the grid offsets
        between their tokens. No final norm.
      * The output g(j) is the prediction of f(j+1); draft logits for token j+1 are the
        target's frozen `output`(g(j)) (no norm; not stored here), combined over the CFG rows
        like the target's (each CFG row runs its own drafter pass on its own row's features).
      * Chain drafting: g(j) replaces f(j+1) as the feature of element j+1, paired with the
        drafted token j+1; the drafter's KV cache keeps the keys/values of every element, and
        after verification the accepted elements are recomputed from the target's true
        features (as EAGLE does).
    """

    def __init__(self, cfg: GPTConfig, n_layer=1, embed_norm=True):
        super().__init__()
        self.cfg, self.n_layer = cfg, n_layer
        self.embed_norm = RMSNorm(cfg.dim, cfg.norm_eps) if embed_norm else nn.Identity()
        self.fc = nn.Linear(2 * cfg.dim, cfg.dim, bias=True)
        self.layers = nn.ModuleList([TransformerBlock(cfg) for _ in range(n_layer)])
        self.layers[0].attention_norm = nn.Identity()  # EAGLE: no input norm on layer 0
        self.register_buffer("rope", rope_table_2d(cfg.grid_size, cfg.head_dim, cfg.rope_base,
                                                   cfg.cls_token_num), persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
        nn.init.zeros_(self.fc.bias)
        with torch.no_grad():  # start near "x = feature" so g(j) ~ f(j) at init
            self.fc.weight[:, cfg.dim:] += torch.eye(cfg.dim)

    def fuse(self, emb, feat):
        """emb = E(token), feat [..., D] -> fc([embed_norm(emb); feat])."""
        return self.fc(torch.cat([self.embed_norm(emb), feat], dim=-1))

    def forward(self, emb, feat, rope_pos, mask=None, caches=None):
        """emb = E(token j), feat = f(j) [B,S,D]; rope_pos [S] or [B,S] = j+1 (the sequence index
        of token j in the target's RoPE table, which this module rebuilds identically).
        mask / caches as in GPT.hidden. Returns g [B,S,D], the predicted features f(j+1)."""
        rope = self.rope[rope_pos]
        if rope.dim() == 3:
            rope = rope.unsqueeze(0)
        x = self.fuse(emb, feat)
        for i, layer in enumerate(self.layers):
            x = layer(x, rope, mask, None if caches is None else caches[i])
        return x


EAGLE_PREFIX = "eagle."  # tensor names in the file: "eagle." + EagleDrafter.state_dict() key


def eagle_metadata(cfg: GPTConfig, n_layer=1, embed_norm=True):
    return {"vkspec.kind": "eagle_drafter", "dim": str(cfg.dim), "n_layer": str(n_layer),
            "embed_norm": "rmsnorm" if embed_norm else "none",
            "n_head": str(cfg.n_head), "n_kv_head": str(cfg.n_head), "head_dim": str(cfg.head_dim),
            "ffn_hidden": str(cfg.ffn_hidden), "vocab_size": str(cfg.vocab_size),
            "grid_size": str(cfg.grid_size), "rope_base": str(cfg.rope_base),
            "norm_eps": str(cfg.norm_eps), "cls_token_num": str(cfg.cls_token_num),
            # the forward contract the engine checks (engine/model/eagle_drafter.cpp)
            "feature": "post_norm_hidden", "predicts": "post_norm_hidden",
            "input": "fc(cat(embed_norm(tok_embeddings(token_j)), feature_j))",
            "embedding": "shared_base_tok_embeddings", "output": "shared_base_output",
            "first_layer_attention_norm": "none", "final_norm": "none",
            "rope_index": "token_index_plus_cls_token_num"}


# ----------------------------------------------------------------------------------------------
# VQ tokenizer (LlamaGen VQModel)
# ----------------------------------------------------------------------------------------------
@dataclass
class VQConfig:
    ch: int = 32
    ch_mult: List[int] = field(default_factory=lambda: [1, 2])
    z_channels: int = 64
    codebook_size: int = 1024
    codebook_embed_dim: int = 8
    num_res_blocks: int = 2
    in_channels: int = 1
    out_channels: int = 1
    beta: float = 0.25

    @property
    def downsample(self):
        return 2 ** (len(self.ch_mult) - 1)


def Normalize(c):
    return nn.GroupNorm(32, c, eps=1e-6, affine=True)


def swish(x):
    return x * torch.sigmoid(x)


class ResnetBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm1 = Normalize(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, 1, 1)
        self.norm2 = Normalize(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.nin_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        h = self.conv1(swish(self.norm1(x)))
        h = self.conv2(swish(self.norm2(h)))
        return (x if self.nin_shortcut is None else self.nin_shortcut(x)) + h


class AttnBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Normalize(c)
        self.q, self.k, self.v, self.proj_out = (nn.Conv2d(c, c, 1) for _ in range(4))

    def forward(self, x):
        B, C, H, W = x.shape
        h = self.norm(x)
        q = self.q(h).reshape(B, C, H * W).transpose(1, 2)  # [B, HW, C]
        k = self.k(h).reshape(B, C, H * W)                  # [B, C, HW]
        v = self.v(h).reshape(B, C, H * W)
        w = (q @ k * C ** -0.5).softmax(-1)                 # [B, HWq, HWk]
        o = (v @ w.transpose(1, 2)).reshape(B, C, H, W)
        return x + self.proj_out(o)


class Downsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 2, 0)

    def forward(self, x):
        return self.conv(F.pad(x, (0, 1, 0, 1)))  # pad right/bottom only, as LlamaGen


class Upsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class Encoder(nn.Module):
    def __init__(self, cfg: VQConfig):
        super().__init__()
        ch, mult, n = cfg.ch, cfg.ch_mult, len(cfg.ch_mult)
        self.conv_in = nn.Conv2d(cfg.in_channels, ch, 3, 1, 1)
        self.conv_blocks = nn.ModuleList()
        cin = ch
        for i in range(n):
            blk = nn.Module()
            blk.res, blk.attn = nn.ModuleList(), nn.ModuleList()
            cout = ch * mult[i]
            for _ in range(cfg.num_res_blocks):
                blk.res.append(ResnetBlock(cin, cout))
                cin = cout
                if i == n - 1:
                    blk.attn.append(AttnBlock(cin))
            if i != n - 1:
                blk.downsample = Downsample(cin)
            self.conv_blocks.append(blk)
        self.mid = nn.ModuleList([ResnetBlock(cin, cin), AttnBlock(cin), ResnetBlock(cin, cin)])
        self.norm_out = Normalize(cin)
        self.conv_out = nn.Conv2d(cin, cfg.z_channels, 3, 1, 1)

    def forward(self, x):
        h = self.conv_in(x)
        for blk in self.conv_blocks:
            for j, res in enumerate(blk.res):
                h = res(h)
                if len(blk.attn):
                    h = blk.attn[j](h)
            if hasattr(blk, "downsample"):
                h = blk.downsample(h)
        for m in self.mid:
            h = m(h)
        return self.conv_out(swish(self.norm_out(h)))


class Decoder(nn.Module):
    def __init__(self, cfg: VQConfig):
        super().__init__()
        ch, mult, n = cfg.ch, cfg.ch_mult, len(cfg.ch_mult)
        cin = ch * mult[-1]
        self.conv_in = nn.Conv2d(cfg.z_channels, cin, 3, 1, 1)
        self.mid = nn.ModuleList([ResnetBlock(cin, cin), AttnBlock(cin), ResnetBlock(cin, cin)])
        self.conv_blocks = nn.ModuleList()
        for i in reversed(range(n)):  # conv_blocks[0] is the lowest resolution
            blk = nn.Module()
            blk.res, blk.attn = nn.ModuleList(), nn.ModuleList()
            cout = ch * mult[i]
            for _ in range(cfg.num_res_blocks + 1):
                blk.res.append(ResnetBlock(cin, cout))
                cin = cout
                if i == n - 1:
                    blk.attn.append(AttnBlock(cin))
            if i != 0:
                blk.upsample = Upsample(cin)
            self.conv_blocks.append(blk)
        self.norm_out = Normalize(cin)
        self.conv_out = nn.Conv2d(cin, cfg.out_channels, 3, 1, 1)

    def forward(self, z):
        h = self.conv_in(z)
        for m in self.mid:
            h = m(h)
        for blk in self.conv_blocks:
            for j, res in enumerate(blk.res):
                h = res(h)
                if len(blk.attn):
                    h = blk.attn[j](h)
            if hasattr(blk, "upsample"):
                h = blk.upsample(h)
        return self.conv_out(swish(self.norm_out(h)))


class VectorQuantizer(nn.Module):
    """Nearest neighbour in an L2-normalised codebook (both z and codes normalised)."""

    def __init__(self, n_e, e_dim, beta):
        super().__init__()
        self.n_e, self.e_dim, self.beta = n_e, e_dim, beta
        self.embedding = nn.Embedding(n_e, e_dim)
        with torch.no_grad():
            self.embedding.weight.copy_(F.normalize(torch.randn(n_e, e_dim), dim=-1))

    def codebook(self):
        return F.normalize(self.embedding.weight, dim=-1)

    def forward(self, z):
        """z [B,C,H,W] -> (z_q straight-through [B,C,H,W], loss, indices [B,H,W], z_normed flat)."""
        B, C, H, W = z.shape
        zf = F.normalize(z.permute(0, 2, 3, 1).reshape(-1, C), dim=-1)
        e = self.codebook()
        idx = (zf @ e.t()).argmax(-1)  # unit vectors: max dot == min L2 distance
        zq = e[idx]
        loss = None
        if self.training:
            loss = ((zq - zf.detach()) ** 2).mean() + self.beta * ((zq.detach() - zf) ** 2).mean()
        zq = zf + (zq - zf).detach()
        zq = zq.view(B, H, W, C).permute(0, 3, 1, 2).contiguous()
        return zq, loss, idx.view(B, H, W), zf

    def lookup(self, idx):
        """idx [B,H,W] -> [B,C,H,W]."""
        return self.codebook()[idx].permute(0, 3, 1, 2).contiguous()


class VQModel(nn.Module):
    def __init__(self, cfg: VQConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.quantize = VectorQuantizer(cfg.codebook_size, cfg.codebook_embed_dim, cfg.beta)
        self.quant_conv = nn.Conv2d(cfg.z_channels, cfg.codebook_embed_dim, 1)
        self.post_quant_conv = nn.Conv2d(cfg.codebook_embed_dim, cfg.z_channels, 1)

    def encode(self, x):
        return self.quantize(self.quant_conv(self.encoder(x)))

    def decode(self, zq):
        return self.decoder(self.post_quant_conv(zq))

    def decode_code(self, idx):
        """idx [B,H,W] token grid -> image [B,out_channels,H*ds,W*ds] in [-1,1] (unclamped)."""
        return self.decode(self.quantize.lookup(idx))

    def forward(self, x):
        zq, loss, idx, zf = self.encode(x)
        return self.decode(zq), loss, idx, zf


def vq_metadata(cfg: VQConfig):
    return {"vkspec.kind": "vq", "ch": str(cfg.ch), "ch_mult": ",".join(map(str, cfg.ch_mult)),
            "z_channels": str(cfg.z_channels), "codebook_size": str(cfg.codebook_size),
            "codebook_embed_dim": str(cfg.codebook_embed_dim),
            "num_res_blocks": str(cfg.num_res_blocks), "in_channels": str(cfg.in_channels),
            "out_channels": str(cfg.out_channels), "codebook_l2_norm": "1",
            "norm_groups": "32", "norm_eps": "1e-06", "downsample": str(cfg.downsample)}


def vq_config_from_metadata(m):
    return VQConfig(ch=int(m["ch"]), ch_mult=[int(v) for v in m["ch_mult"].split(",")],
                    z_channels=int(m["z_channels"]), codebook_size=int(m["codebook_size"]),
                    codebook_embed_dim=int(m["codebook_embed_dim"]),
                    num_res_blocks=int(m["num_res_blocks"]), in_channels=int(m["in_channels"]),
                    out_channels=int(m["out_channels"]))


def vq16_llamagen_config():
    """LlamaGen's VQ-16 (ImageNet) in this code: same module, different numbers."""
    return VQConfig(ch=128, ch_mult=[1, 1, 2, 2, 4], z_channels=256, codebook_size=16384,
                    codebook_embed_dim=8, num_res_blocks=2, in_channels=3, out_channels=3)


# ----------------------------------------------------------------------------------------------
# Classifier (for FID-style metrics on 32x32 Fashion-MNIST)
# ----------------------------------------------------------------------------------------------
class Classifier(nn.Module):
    """Input [B,1,32,32] in [-1,1]. Plain conv/ReLU/max-pool (no batch norm) so it is trivial to
    reimplement. `features()` returns the 256-d penultimate activations (after ReLU, before the
    dropout/final linear); FID statistics are computed on these."""

    def __init__(self, in_channels=1, num_classes=10, feature_dim=256):
        super().__init__()
        c = [in_channels, 32, 64, 128]
        self.conv1a, self.conv1b = nn.Conv2d(c[0], c[1], 3, 1, 1), nn.Conv2d(c[1], c[1], 3, 1, 1)
        self.conv2a, self.conv2b = nn.Conv2d(c[1], c[2], 3, 1, 1), nn.Conv2d(c[2], c[2], 3, 1, 1)
        self.conv3a = nn.Conv2d(c[2], c[3], 3, 1, 1)
        self.fc1 = nn.Linear(c[3] * 4 * 4, feature_dim)
        self.fc2 = nn.Linear(feature_dim, num_classes)
        self.drop = nn.Dropout(0.3)

    def features(self, x):
        x = F.max_pool2d(F.relu(self.conv1b(F.relu(self.conv1a(x)))), 2)  # 16x16
        x = F.max_pool2d(F.relu(self.conv2b(F.relu(self.conv2a(x)))), 2)  # 8x8
        x = F.max_pool2d(F.relu(self.conv3a(x)), 2)                       # 4x4
        return F.relu(self.fc1(x.flatten(1)))

    def forward(self, x):
        return self.fc2(self.drop(self.features(x)))


# ----------------------------------------------------------------------------------------------
# MuLo-SD upsamplers (decoding/upsampler*.h runs them): a pixel super-resolution net and the
# trained latent-space upsampler. Both are plain 3x3 convs + SiLU + pixel shuffle, ops the
# engine has (conv2d, swish, pixel_shuffle, codebook_quantize).
# ----------------------------------------------------------------------------------------------
class SRNet(nn.Module):
    """ESPCN-style pixel super-resolution, x`scale` (2 or 4): [B,1,h,w] in [-1,1] ->
    [B,1,h*scale,w*scale] = nearest(x) + pixel_shuffle(body(x)) (the net learns the residual
    over nearest upsampling). body: conv3x3(1->ch) SiLU, (depth-2) x [conv3x3(ch->ch) SiLU],
    conv3x3(ch->scale^2). Stands in for the paper's off-the-shelf SR model (none offline)."""

    def __init__(self, scale, ch=32, depth=4):
        super().__init__()
        self.scale, self.ch, self.depth = scale, ch, depth
        cin = 1
        self.convs = nn.ModuleList()
        for _ in range(depth - 1):
            self.convs.append(nn.Conv2d(cin, ch, 3, 1, 1))
            cin = ch
        self.convs.append(nn.Conv2d(cin, scale * scale, 3, 1, 1))

    def forward(self, x):
        h = x
        for c in self.convs[:-1]:
            h = F.silu(c(h))
        up = F.interpolate(x, scale_factor=float(self.scale), mode="nearest")
        return up + F.pixel_shuffle(self.convs[-1](h), self.scale)


def sr_metadata(net: SRNet):
    return {"vkspec.kind": "sr_net", "scale": str(net.scale), "channels": str(net.ch),
            "depth": str(net.depth), "in_channels": "1", "activation": "silu",
            "residual": "nearest", "pixel_range": "-1,1"}


def row_causal_mask(k=3):
    """1 where a 3x3 tap reads the same or an earlier row: the bottom row is masked, so output
    row i depends on input rows <= i only."""
    m = torch.ones(1, 1, k, k)
    m[..., k // 2 + 1:, :] = 0
    return m


class MaskedConv2d(nn.Conv2d):
    """3x3 conv whose taps on the rows below are zero (MuLo-SD's masked row-causal conv)."""

    def __init__(self, cin, cout):
        super().__init__(cin, cout, 3, 1, 1)
        self.register_buffer("mask", row_causal_mask(3), persistent=False)
        with torch.no_grad():
            self.weight.mul_(self.mask)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, 1, 1)


class LatentUpsampler(nn.Module):
    """MuLo-SD's latent-space upsampler U_r: a low-resolution token grid [B,w,w] -> a
    high-resolution latent grid [B,e_dim,r w,r w] (quantised to the VQ codebook afterwards).
    embed (own table, vocab x ch) -> `depth` masked row-causal 3x3 convs with SiLU ->
    masked conv to e_dim*r^2 -> pixel shuffle r. Row-causal end to end: high rows
    r i..r i+r-1 depend on low rows <= i only, so a band can be upsampled before the rows
    below it are drafted."""

    def __init__(self, vocab, e_dim, ratio, ch=64, depth=3):
        super().__init__()
        self.vocab, self.e_dim, self.ratio, self.ch, self.depth = vocab, e_dim, ratio, ch, depth
        self.embed = nn.Embedding(vocab, ch)
        self.convs = nn.ModuleList([MaskedConv2d(ch, ch) for _ in range(depth)])
        self.out = MaskedConv2d(ch, e_dim * ratio * ratio)

    def forward(self, tok):
        h = self.embed(tok).permute(0, 3, 1, 2)
        for c in self.convs:
            h = F.silu(c(h))
        return F.pixel_shuffle(self.out(h), self.ratio)


def latent_upsampler_metadata(net: LatentUpsampler):
    return {"vkspec.kind": "latent_upsampler", "ratio": str(net.ratio), "vocab_size": str(net.vocab),
            "embed_dim": str(net.e_dim), "channels": str(net.ch), "depth": str(net.depth),
            "activation": "silu", "mask": "row_causal", "tokenizer": "fmnist_vq"}


class PatchDiscriminator(nn.Module):
    """Small PatchGAN (pix2pix/taming style) for 32x32 grayscale: 4x4 stride-2 convs with
    LeakyReLU, one real/fake logit per 8x8-ish patch. Training only."""

    def __init__(self, ch=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, ch, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(ch, 2 * ch, 4, 2, 1), nn.GroupNorm(8, 2 * ch), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * ch, 1, 3, 1, 1))

    def forward(self, x):
        return self.net(x)
