"""FlashAR (Zhou et al., arXiv 2605.09430): a raster LlamaGen GPT (c2i, or t2i as the released
train_t2i_flashar.py) post-trained to emit a whole anti-diagonal of the token grid per step (H+W-1
steps instead of H*W). Our PyTorch reference for
the engine: the model, the training forward, the diagonal decoder and the one-file export.

Model (issue #48; summary in shared/papers/flashar.txt, section 3):
  * backbone = our `vkspec_models.GPT`, unchanged in shape; its own norm + output is the
    horizontal head H: the hidden state at image cell (r,c) predicts (r,c+1).
  * vertical branch: V TransformerBlocks fed with the hidden state ENTERING backbone layer
    s = n_layer - V (the branch runs beside the last V backbone layers, no extra serial depth),
    then its own RMSNorm + Linear(dim, vocab): the hidden state at (r,c) predicts (r+1,c).
    Initialised from the teacher: blocks = copies of backbone layers s..s+V-1, norm/output =
    copies of the LM head's.
  * diagonal attention mask, in the backbone and in the vertical blocks alike: the prefix
    (class token, or t2i's right-aligned caption positions, padding hidden from every query but
    itself as LlamaGen's emb_masks hide it) is causal; an image cell on diagonal d = r+c attends to the prefix and to
    every image cell with r'+c' <= d, its own diagonal included. RoPE by grid cell, as GPT.
  * fused logits for a target cell (r,c):
        (0,0)           g*H(prefix) + (1-g)*V(prefix)        gate on the prefix's two heads
        row 0, c > 0    H(r, c-1)
        col 0, r > 0    V(r-1, c)
        interior        g*H(r, c-1) + (1-g)*V(r-1, c)        (logits are mixed, not probs)
  * gate (LlamaGen-FlashAR `--hv-gate`): per target, the two logit vectors (detached, f32, NaN
    -> 0) concatenated [H ; V], centred (minus the mean of all 2*vocab values) and divided by
    their RMS after centring (sqrt(max(mean square, 1e-6))), clamped to [-6, 6]; g =
    sigmoid(fc2(SiLU(fc1(.)))) with fc1 Linear(2*vocab -> P, no bias), fc2 Linear(P -> 1, bias),
    P = max(32, vocab // 512). fc2 starts at zero (g = 0.5), fc1 ~ N(0, 1/sqrt(2*vocab)).
    gate_norm "joint" is that, the released code's `_hv_gate`; "per-head" (files written before
    flashar.gate_norm existed, the first fmnist_flashar16) centres and scales H and V each on its
    own, (x - mean) / (rms + 1e-6). Without `--hv-gate` the released code mixes with a constant:
    g = sigmoid(hv_mix_logit) (`--hv-mix`) or 0.5 (the t2i script's): gate "constant", one
    parameter `mix_logit`.

Training layout: [condition positions 0..P-1, cell 0, ..., cell N-1] (all N = H*W cells fed, no
shift), at sequence positions 0..P-1+N; position P+n holds raster cell n = r*W + c (P = 1 for c2i). Outputs of diagonal d only
feed targets on diagonal d+1, so nothing leaks (`fuse` picks the sources).

File (`save_flashar` / `load_flashar`): the fine-tuned backbone under the SAME names as a plain
GPT file (so a future engine loader reads the backbone as it reads a target), plus `vertical.layers.{i}.*` (a
backbone layer's sub-names), `vertical.norm.weight`, `vertical.output.weight`, `gate.fc1.weight`,
`gate.fc2.weight`, `gate.fc2.bias`; matrices F16, RMSNorm weights and the whole gate F32.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from safetensors_io import load_file, save_file
from vkspec_models import (GPT, RMSNorm, TransformerBlock, gpt_config_from_metadata,
                           gpt_metadata, sample_logits)

GATE_CLAMP = 6.0


def gate_hidden_size(vocab):
    return max(32, vocab // 512)


GATE_NORMS = ("joint", "per-head")


class HVGate(nn.Module):
    """g = sigmoid(fc2(SiLU(fc1(z)))) on detached f32 logits, z the normalised [H; V]; see the
    module doc for `norm`."""

    def __init__(self, vocab, hidden=None, norm="joint"):
        super().__init__()
        assert norm in GATE_NORMS, norm
        self.norm = norm
        hidden = hidden or gate_hidden_size(vocab)
        self.fc1 = nn.Linear(2 * vocab, hidden, bias=False)
        self.fc2 = nn.Linear(hidden, 1, bias=True)
        nn.init.normal_(self.fc1.weight, std=1.0 / math.sqrt(2 * vocab))
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    @staticmethod
    def normalise(logits):
        """Per head: each vector centred and scaled on its own ("per-head")."""
        x = torch.nan_to_num(logits.detach().float(), nan=0.0)
        x = x - x.mean(-1, keepdim=True)
        x = x / (x.pow(2).mean(-1, keepdim=True).sqrt() + 1e-6)
        return x.clamp(-GATE_CLAMP, GATE_CLAMP)

    @staticmethod
    def normalise_joint(h_logits, v_logits):
        """Both vectors as one, as the released `_hv_gate` ("joint")."""
        x = torch.cat([h_logits.detach().float(), v_logits.detach().float()], dim=-1)
        x = torch.nan_to_num(x, nan=0.0, posinf=30.0, neginf=-30.0)
        x = x - x.mean(-1, keepdim=True)
        x = x / x.pow(2).mean(-1, keepdim=True).clamp_min(1e-6).sqrt()
        return x.clamp(-GATE_CLAMP, GATE_CLAMP)

    def forward(self, h_logits, v_logits):
        """[..., vocab] x2 -> g [...] in (0,1), the weight of the horizontal head."""
        if self.norm == "joint":
            z = self.normalise_joint(h_logits, v_logits)
        else:
            z = torch.cat([self.normalise(h_logits), self.normalise(v_logits)], dim=-1)
        return torch.sigmoid(self.fc2(F.silu(self.fc1(z))).squeeze(-1))


class ConstantGate(nn.Module):
    """g = sigmoid(mix_logit) for every target: the released code without `--hv-gate` (its
    `hv_mix_logit` with `--hv-mix`, else 0.5, mix_logit 0)."""

    def __init__(self, mix_logit=0.0):
        super().__init__()
        self.mix_logit = nn.Parameter(torch.tensor([float(mix_logit)]))

    def forward(self, h_logits, v_logits):
        return torch.sigmoid(self.mix_logit).expand(h_logits.shape[:-1]).to(torch.float32)


class VerticalBranch(nn.Module):
    def __init__(self, cfg, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([TransformerBlock(cfg) for _ in range(n_layers)])
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)


def diagonal_index(grid):
    """[grid*grid] anti-diagonal d = r + c of each raster cell."""
    n = torch.arange(grid * grid)
    return n // grid + n % grid


def hide_padding(mask, emb_mask):
    """mask bool [S, T] (True = attend) -> [B, 1, S, T] with the caption padding (emb_mask 0,
    [B, P] over key positions 0..P-1) hidden from every query but itself, as LlamaGen's generation
    mask. With the KV cache the queries are the last S of the T key positions."""
    S, T = mask.shape
    m = mask.unsqueeze(0).repeat(emb_mask.shape[0], 1, 1)
    m[:, :, :emb_mask.shape[1]] &= emb_mask.bool().unsqueeze(1)
    m[:, torch.arange(S), torch.arange(T - S, T)] = True
    return m.unsqueeze(1)


def diagonal_mask(grid, cls_token_num=1):
    """bool [S, S], S = cls + grid^2, True = attend. Prefix causal (and invisible to nothing:
    every image cell sees the whole prefix); image cell on diagonal d sees image cells on
    diagonals <= d, its own diagonal included."""
    N, P = grid * grid, cls_token_num
    S = P + N
    m = torch.zeros(S, S, dtype=torch.bool)
    m[:P, :P] = torch.ones(P, P, dtype=torch.bool).tril()
    m[P:, :P] = True
    d = diagonal_index(grid)
    m[P:, P:] = d[None, :] <= d[:, None]
    return m


def fuse_sources(grid, cls_token_num=1, cell_pos=None, upper_pos=None):
    """Index tables of `FlashAR.fuse` for targets n = 0..N-1 (raster): h_src[n], v_src[n] are
    sequence positions (P-1 = the last condition position, P+m = cell m) whose H / V logits
    predict cell n, and kind[n] = 0 corner (gated), 1 row 0 (H only), 2 column 0 (V only),
    3 interior (gated). cell_pos [N]: each cell's sequence position (default P + n); upper_pos
    [N]: where V of a target below row 0 is read (default its upper neighbour's position)."""
    N, last = grid * grid, cls_token_num - 1
    n = torch.arange(N)
    r, c = n // grid, n % grid
    if cell_pos is None:
        cell_pos = cls_token_num + n
    if upper_pos is None:
        upper_pos = cell_pos[(n - grid).clamp(min=0)]
    h_src = torch.where(c > 0, cell_pos[(n - 1).clamp(min=0)], torch.full_like(n, last))  # the left neighbour
    v_src = torch.where(r > 0, upper_pos, torch.full_like(n, last))
    kind = torch.full((N,), 3, dtype=torch.long)
    kind[(r == 0) & (c > 0)] = 1
    kind[(c == 0) & (r > 0)] = 2
    kind[0] = 0
    return h_src, v_src, kind


@dataclass
class FlashArShape:
    """What FlashAR and generate_diagonal read of a config, for a backbone other than our GPT
    (Janus-Pro's, Lumina-mGPT's): model_type names the family, pad_id Janus's padding id."""
    grid_size: int
    cls_token_num: int  # condition positions P
    vocab_size: int     # image codes
    n_layer: int
    dim: int
    model_type: str
    pad_id: int = -1

    @property
    def block_size(self):
        return self.grid_size * self.grid_size


class FlashAR(nn.Module):
    """A GPT backbone (`self.base`, a vkspec_models.GPT) + vertical branch + H/V gate. The
    backbone's own parts are reached through a few methods (`layers`, `rope`, `run_layer`,
    `h_head`, `v_head`, `embed`, `null_condition`) that JanusFlashAR overrides."""

    def __init__(self, base, vertical_layers=1, vertical_start=None, gate_hidden=None, gate="mlp",
                 gate_norm="joint", shape=None):
        super().__init__()
        cfg = shape if shape is not None else base.cfg
        if shape is None:
            assert cfg.model_type == "c2i" and cfg.cls_token_num == 1 or cfg.model_type == "t2i", \
                "FlashAR here: LlamaGen c2i (one class token) or t2i"
        self.base, self.cfg = base, cfg
        self.n_vertical = vertical_layers
        self.vertical_start = cfg.n_layer - vertical_layers if vertical_start is None else vertical_start
        assert 0 <= self.vertical_start <= cfg.n_layer
        self.vertical = self.make_vertical(vertical_layers)
        assert gate in ("mlp", "constant"), gate
        self.gate_kind = gate
        self.gate = HVGate(cfg.vocab_size, gate_hidden, gate_norm) if gate == "mlp" else ConstantGate()
        self.gate_hidden = self.gate.fc1.out_features if gate == "mlp" else 0
        mask, (h_src, v_src, kind) = self.layout(cfg.grid_size, cfg.cls_token_num)
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("h_src", h_src, persistent=False)
        self.register_buffer("v_src", v_src, persistent=False)
        self.register_buffer("kind", kind, persistent=False)

    def make_vertical(self, n_layers):
        return VerticalBranch(self.cfg, n_layers)

    def layout(self, grid, prefix):
        """The training sequence's mask and fuse_sources' tables (LuminaFlashAR places breaks)."""
        return diagonal_mask(grid, prefix), fuse_sources(grid, prefix)

    @classmethod
    def from_gpt(cls, gpt, vertical_layers=1, vertical_start=None, copy_backbone=True, gate_norm="joint", **kw):
        """The untrained FlashAR of a trained raster GPT: vertical blocks = copies of backbone
        layers s..s+V-1 (past the last layer: the last layer again), vertical norm/head =
        copies of the backbone's final norm and head, gate 0.5. copy_backbone: deep-copy the GPT
        (else share it). kw: what a subclass's constructor needs besides (JanusFlashAR's prompt)."""
        import copy
        base = copy.deepcopy(gpt) if copy_backbone else gpt
        m = cls(base, vertical_layers, vertical_start, gate_norm=gate_norm, **kw)
        s, L = m.vertical_start, len(m.layers())
        with torch.no_grad():
            for i, blk in enumerate(m.vertical.layers):
                blk.load_state_dict(m.layers()[min(s + i, L - 1)].state_dict())
            m.copy_head_into_vertical()
        return m

    # the backbone's parts (LlamaGen's GPT here) -------------------------------------------------
    def layers(self):
        return self.base.layers

    def copy_head_into_vertical(self):
        self.vertical.norm.load_state_dict(self.base.norm.state_dict())
        self.vertical.output.load_state_dict(self.base.output.state_dict())

    def rope(self, pos):
        """What run_layer passes every layer for sequence positions pos [S]."""
        return (self.base.rope[pos].unsqueeze(0),)

    def run_layer(self, layer, x, rope, mask, cache):
        return layer(x, *rope, mask, cache)

    def h_head(self, x):
        return self.base.output(self.base.norm(x)).float()

    def v_head(self, v):
        return self.vertical.output(self.vertical.norm(v)).float()

    def null_condition(self, labels):
        """The CFG rows' condition for conditions `labels` (the null class, or the null caption)."""
        if self.cfg.model_type == "t2i":
            return self.base.cls_embedding.uncond_embedding[:self.cfg.cls_token_num].to(labels).expand(
                labels.shape[0], -1, -1)
        return torch.full_like(labels, self.cfg.num_classes)

    # ------------------------------------------------------------------------------------------
    def embed(self, tokens, labels):
        """[condition embedding; token embeddings]; labels: class ids [B] (c2i) or placed captions
        [B, P, caption_dim] (t2i, null rows already the null caption). No class or token dropout
        here (the trainer drops labels itself, so the teacher sees the same labels)."""
        if self.cfg.model_type == "t2i":
            parts = [self.base.cls_embedding(labels)[:, :self.cfg.cls_token_num]]
        else:
            parts = [self.base.cls_embedding.embedding_table(labels).unsqueeze(1)]
        if tokens is not None and tokens.shape[1] > 0:
            parts.append(self.base.tok_embeddings(tokens))
        return torch.cat(parts, dim=1)

    def trunk(self, x, pos, mask, caches=None, backbone_grad=True):
        """Backbone and vertical branch on embeddings x [B,S,D] at sequence positions pos [S].
        caches: None or {'b': [dict per backbone layer], 'v': [dict per vertical layer]}.
        Returns (H logits [B,S,V] f32, V logits [B,S,V] f32)."""
        rope = self.rope(pos)
        s = self.vertical_start
        xs = None
        with torch.set_grad_enabled(backbone_grad and torch.is_grad_enabled()):
            for i, layer in enumerate(self.layers()):
                if i == s:
                    xs = x
                x = self.run_layer(layer, x, rope, mask, None if caches is None else caches["b"][i])
            if xs is None:
                xs = x
            h = self.h_head(x)
        v = xs
        for j, layer in enumerate(self.vertical.layers):
            v = self.run_layer(layer, v, rope, mask, None if caches is None else caches["v"][j])
        return h, self.v_head(v)

    def forward(self, tokens, labels, backbone_grad=True, emb_mask=None):
        """Training forward. tokens [B,N] (the whole grid), labels [B] (already dropped to the
        null class where wanted) or t2i captions (see embed) with emb_mask [B, P] (0 = padding).
        Returns (H logits, V logits), both [B, P+N, vocab] over the sequence positions."""
        x = self.embed(tokens, labels)
        pos = torch.arange(x.shape[1], device=x.device)
        mask = self.mask if emb_mask is None else hide_padding(self.mask, emb_mask)
        return self.trunk(x, pos, mask, backbone_grad=backbone_grad)

    def fuse(self, h, v):
        """Sequence-position logits -> per-target tensors over raster targets n = 0..N-1:
        (fused [B,N,V], H source [B,N,V], V source [B,N,V], g [B,N], kind [N]). g is the weight
        of H actually used: the gate on corner/interior, 1 on row 0, 0 on column 0. For row 0 the
        V source (and for column 0 the H source) is a placeholder the fused logits ignore."""
        hs, vs = h[:, self.h_src], v[:, self.v_src]
        g = self.gate(hs, vs)
        kind = self.kind
        g = torch.where(kind == 1, torch.ones_like(g), torch.where(kind == 2, torch.zeros_like(g), g))
        mixed = g.unsqueeze(-1) * hs + (1 - g).unsqueeze(-1) * vs
        k = kind.view(1, -1, 1)
        fused = torch.where(k == 1, hs, torch.where(k == 2, vs, mixed))
        return fused, hs, vs, g, kind

    def fused_logits(self, tokens, labels, emb_mask=None):
        h, v = self(tokens, labels, emb_mask=emb_mask)
        return self.fuse(h, v)[0]


# ----------------------------------------------------------------------------------------------
# diagonal decoding
# ----------------------------------------------------------------------------------------------
def diagonal_cells(grid, d):
    """Cells (r, c) of anti-diagonal d, ordered by ascending row."""
    return [(r, d - r) for r in range(max(0, d - grid + 1), min(d, grid - 1) + 1)]


@torch.no_grad()
def generate_diagonal(model: FlashAR, labels, cfg_scale=2.0, temperature=1.0, top_k=0, top_p=1.0,
                      generator=None, stats=None, return_logits=False, emb_mask=None):
    """Anti-diagonal decoding with a KV cache. labels [B] (c2i) or placed captions [B, P,
    caption_dim] with emb_mask [B, P] (t2i; 0 = padding) -> tokens [B, N] (raster order).

    Steps (H = W = grid):
      1. prefill: the condition positions 0..P-1 (rows [cond; uncond] with cfg_scale > 1: labels
         then the null class, or captions then the null caption with the caption's padding
         hidden in both rows, as LlamaGen samples); the last one's H and V logits give the corner
         (0,0) through the gate.
      2. for d = 0 .. 2W-3: one forward over the cells of diagonal d (ascending row, at their
         raster positions P + r*W + c, RoPE of their grid cells), attending to everything cached
         (prefix and diagonals < d) and to each other (no mask inside the step); their keys and
         values enter the cache (backbone layers and vertical blocks alike). The fused logits of
         each cell (r', c') of diagonal d+1 take H from (r', c'-1) and V from (r'-1, c') per
         `FlashAR.fuse`'s rules.
      3. after each forward: the gate is applied per CFG row (cond and uncond rows each fuse
         their own two heads), then logits = u + cfg * (c - u), then temperature / top-k / top-p
         (vkspec_models.sample_logits) and every cell of the next diagonal is sampled at once.
    The last cell's diagonal (d = 2W-2) is never fed, as raster decoding never feeds its last
    token: 2W-1 forwards (31 for 16x16) = the prefill + diagonals 0..2W-3, each followed by one
    sampling step.

    Random draws (deterministic given `generator`): exactly one torch.multinomial call per
    sampling step, 2W-1 calls in all, in diagonal order 0, 1, ..., 2W-2; the call of diagonal
    d+1 draws from a [B * n_cells, vocab] probability matrix whose rows are image-major (image 0's
    cells by ascending row, then image 1's, ...), one sample per row.

    stats: optional dict filled with 'forwards' and 'sample_calls'. return_logits: also return
    the conditional row's fused logits per target [B, N, vocab] (before CFG) and the CFG-mixed
    logits fed to the sampler [B, N, vocab] (for parity checks)."""
    model.eval()
    if not getattr(model, "kv_decoding", True):
        raise ValueError(f"generate_diagonal: a {model.cfg.model_type} FlashAR decodes by its own module's decoder")
    cfg = model.cfg
    W, N, P = cfg.grid_size, cfg.block_size, cfg.cls_token_num
    dev = labels.device
    B = labels.shape[0]
    use_cfg = cfg_scale > 1.0
    lab = torch.cat([labels, model.null_condition(labels)]) if use_cfg else labels
    if emb_mask is not None and use_cfg:
        emb_mask = torch.cat([emb_mask, emb_mask])
    caches = {"b": [dict() for _ in model.layers()], "v": [dict() for _ in model.vertical.layers]}
    out = torch.full((B, N), -1, dtype=torch.long, device=dev)
    fused_cond = torch.zeros(B, N, cfg.vocab_size) if return_logits else None
    mixed_all = torch.zeros(B, N, cfg.vocab_size) if return_logits else None
    st = stats if stats is not None else {}
    st["forwards"], st["sample_calls"] = 0, 0
    cached = 0

    def forward(x, pos):
        nonlocal cached
        S = x.shape[1]
        mask = torch.ones(S, cached + S, dtype=torch.bool, device=dev)  # cache + own diagonal
        if cached == 0:  # the prefix alone: causal among its own positions
            mask = torch.ones(S, S, dtype=torch.bool, device=dev).tril()
        if emb_mask is not None:
            mask = hide_padding(mask, emb_mask)
        h, v = model.trunk(x, pos, mask, caches)
        cached += S
        st["forwards"] += 1
        return h, v

    def sample(targets, fused):
        """fused [R, n, vocab] for cells `targets` -> write out[:, cell]."""
        n = len(targets)
        if use_cfg:
            c, u = fused[:B], fused[B:]
            mixed = u + cfg_scale * (c - u)
        else:
            mixed = fused
        tok = sample_logits(mixed.reshape(B * n, -1), temperature, top_k, top_p, generator).view(B, n)
        st["sample_calls"] += 1
        idx = torch.tensor([r * W + c for r, c in targets], device=dev)
        out[:, idx] = tok
        if return_logits:
            fused_cond[:, idx] = fused[:B].float()
            mixed_all[:, idx] = mixed.float()

    # prefill: the corner
    x = model.embed(None, lab)
    h, v = forward(x, torch.arange(P, device=dev))
    hc, vc = h[:, P - 1], v[:, P - 1]
    g = model.gate(hc, vc).unsqueeze(-1)
    sample([(0, 0)], (g * hc + (1 - g) * vc).unsqueeze(1))

    for d in range(0, 2 * W - 2):
        cells = diagonal_cells(W, d)
        raster = torch.tensor([r * W + c for r, c in cells], device=dev)
        tok = out[:, raster]
        tok = torch.cat([tok, tok]) if use_cfg else tok
        h, v = forward(model.embed(tok, lab)[:, P:], raster + P)
        where = {cell: i for i, cell in enumerate(cells)}
        nxt = diagonal_cells(W, d + 1)
        parts = []
        for (r, c) in nxt:
            if r == 0:
                parts.append(h[:, where[(r, c - 1)]])
            elif c == 0:
                parts.append(v[:, where[(r - 1, c)]])
            else:
                hs, vs = h[:, where[(r, c - 1)]], v[:, where[(r - 1, c)]]
                g = model.gate(hs, vs).unsqueeze(-1)
                parts.append(g * hs + (1 - g) * vs)
        sample(nxt, torch.stack(parts, dim=1))
    assert (out >= 0).all()
    if return_logits:
        return out, fused_cond, mixed_all
    return out


# ----------------------------------------------------------------------------------------------
# file
# ----------------------------------------------------------------------------------------------
def flashar_keys(model: FlashAR):
    """The metadata a FlashAR file adds to its backbone's: role and the flashar.* keys."""
    m = {"role": "flashar",
         "flashar.vertical_start_layer": str(model.vertical_start),
         "flashar.vertical_layers": str(model.n_vertical),
         "flashar.gate": model.gate_kind}
    if model.gate_kind == "mlp":
        m.update({"flashar.gate_hidden": str(model.gate_hidden), "flashar.gate_norm": model.gate.norm})
    return m


def flashar_metadata(model: FlashAR, extra=None):
    """The plain GPT metadata (the engine reads the backbone as a target) + the FlashAR fields."""
    m = gpt_metadata(model.cfg)
    if extra:
        m.update({k: str(v) for k, v in extra.items()})
    m.update(flashar_keys(model))
    return m


def export_state(model: FlashAR):
    """File tensors: backbone under GPT's names, then vertical.*, gate.*. Matrices (and the
    embeddings) F16; RMSNorm weights and every gate tensor F32."""
    out = {}
    for k, t in model.base.state_dict().items():
        out[k] = t
    for k, t in model.vertical.state_dict().items():
        out["vertical." + k] = t
    for k, t in model.gate.state_dict().items():
        out["gate." + k] = t
    return {k: (t.float() if (k.startswith("gate.") or t.dim() < 2) else t.half()).contiguous()
            for k, t in out.items()}


def save_flashar(model: FlashAR, path, extra_meta=None):
    meta = flashar_metadata(model, extra_meta)
    save_file(export_state(model), path, meta)
    return meta


def load_flashar(path):
    """-> (FlashAR in f32, eval mode, metadata); a Janus-Pro one as flashar_janus.JanusFlashAR."""
    sd, meta = load_file(path)
    if meta.get("vkspec.family") == "janus-pro":
        from flashar_janus import load_janus_flashar
        return load_janus_flashar(path)
    if meta.get("vkspec.family") == "lumina-mgpt":
        from flashar_lumina import load_lumina_flashar
        return load_lumina_flashar(path)
    cfg = gpt_config_from_metadata(meta)
    base = GPT(cfg)
    base.load_state_dict({k: v.float() for k, v in sd.items()
                          if not (k.startswith("vertical.") or k.startswith("gate."))})
    gate = meta.get("flashar.gate", "mlp")
    m = FlashAR(base, int(meta["flashar.vertical_layers"]), int(meta["flashar.vertical_start_layer"]),
                int(meta["flashar.gate_hidden"]) if gate == "mlp" else None, gate,
                meta.get("flashar.gate_norm", "per-head"))  # files from before the key: per-head
    m.vertical.load_state_dict({k[len("vertical."):]: v.float() for k, v in sd.items()
                                if k.startswith("vertical.")})
    m.gate.load_state_dict({k[len("gate."):]: v.float() for k, v in sd.items() if k.startswith("gate.")})
    return m.eval(), meta
