"""Lumina-mGPT's text-to-image generation in PyTorch: our reference for the engine's coming
`lumina-mgpt` family (issue 49). Written from the released code (Alpha-VLLM/Lumina-mGPT:
`lumina_mgpt/inference_solver.py`, `model/chameleon/modeling_chameleon.py`,
`model/chameleon_vae_ori/vocab.py`), not copied; docs/lumina.md says what we rely on and why.

The transformer is Chameleon's as Lumina-mGPT-7B runs it (Hugging Face layout, names as in the
released safetensors: `model.layers.N.self_attn.q_norm.weight`, `lm_head.weight`, ...):
  - RMSNorm (eps from the config, normalised in f32), SwiGLU MLP, untied lm_head;
  - pre-norm blocks (swin_norm false, the 7B) or Swin-style post-norm (swin_norm true, the 34B):
      pre:  a = h + Attn(N1(h));  h = a + MLP(N2(a))
      swin: a = h + N1(Attn(h));  h = a + N2(MLP(a))
  - q and k LayerNorm'd per head over head_dim (mean and biased variance, eps 1e-5 fixed), BEFORE
    RoPE, with affine parameters [model_parallel_size, head_dim] each group shared by
    n_head / model_parallel_size consecutive heads (7B: one gamma and beta for all heads);
  - 1D RoPE in the rotate-half convention (the released weights are already permuted to it).

The image's place in the sequence (inference_solver.py's item processor and logits processors):
  [BOS 0] text("Generate an image of {W}x{H} according to the following prompt:\\n{prompt}") 8710
  8197 (image start), 8804 + H/32, 8804 + W/32 (size tokens, 32-px grids), then for each of the
  H/16 latent rows its W/16 image tokens and 8803 (line break, after the last row too), 8196
  (image end). Image token for VQ code c is BPE id 4 + c (vocab.py's IMGIMG names, `bpe_of_code`).

Sampling: CFG on image-token steps, `u + cfg * (c - u)`, where the unconditional stream is
[8197, H, W] alone at positions 0, 1, 2 (no prompt) followed by the same tokens; at a line-break
or image-end step the distribution is forced to that token, elsewhere restricted to image tokens;
then top-k over the scores (image_top_k, 2000), temperature, softmax, one multinomial draw.
Released defaults: cfg 4.0 (README; 3.0 in the demo), image_top_k 2000, temperature 1.

Where we differ from the released script, on purpose (the engine has a fixed grid):
  - the image start and both size tokens are placed, not sampled (the released script samples
    them with text top-k 10 and image top-k; LANTERN's port places them too);
  - generation ends with the image-end token (the released script goes on to sample 8710).

`uncond_positions_shift_invariance` is the property the engine relies on to give the CFG row the
conditional row's positions: RoPE scores depend on position differences only, so the
unconditional stream at positions L.. (prompt masked out) equals it at 0...
"""
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from janus_model import CheckpointFolder, LlamaAttention, LlamaMLP, rope_cos_sin  # noqa: E402
from safetensors_io import save_file  # noqa: E402
from vkspec_models import RMSNorm  # noqa: E402

# Chameleon's text_tokenizer.json ids as Lumina-mGPT uses them (inference_solver.py, vocab.py).
BOS, PAD, EOS = 0, 1, 2
IMAGE_FIRST = 4            # BPE id of VQ code 0
IMAGE_END = 8196           # <eoss>
IMAGE_START = 8197         # <racm3:break>
SEP = 8710                 # <reserved08706>: ends the prompt, and stops generation
LINE_BREAK = 8803          # <reserved08799>: after every latent row
SIZE_BASE = 8804           # <reserved08800> + n: n grids of PATCH pixels
PATCH = 32                 # pixels per size-token grid; the VQGAN downsamples by 16
QK_NORM_EPS = 1e-5         # fixed in the released ChameleonLayerNorm, not read from the config
PROMPT_TEMPLATE = "Generate an image of {w}x{h} according to the following prompt:\n{prompt}"


def bpe_of_code(code):
    return IMAGE_FIRST + code


def code_of_bpe(bpe):
    return bpe - IMAGE_FIRST


def image_token_name(code):
    """vocab.py's name of the BPE token of VQ code `code`: IMGIMG, its decimal digits as letters
    A (0) .. J (9), then Z."""
    return "IMGIMG" + "".join(chr(ord("A") + int(d)) for d in str(code)) + "Z"


def prompt_text(prompt, width_px, height_px):
    return PROMPT_TEMPLATE.format(w=width_px, h=height_px, prompt=prompt)


def size_token(latent):
    """The size token of a side of `latent` VQ tokens (latent * 16 pixels = latent / 2 grids)."""
    if latent % 2:
        raise ValueError(f"a side of {latent} latent tokens is not a whole number of {PATCH}-pixel grids")
    return SIZE_BASE + latent // 2


def image_prefix(rows, cols):
    """What precedes the first image token: image start and the height and width size tokens."""
    return [IMAGE_START, size_token(rows), size_token(cols)]


def layout_tokens(codes):
    """codes [rows, cols] (VQ codes) -> the image's tokens after image_prefix: each row's BPE ids
    and a line break, then the image end."""
    out = []
    for row in codes.tolist():
        out += [bpe_of_code(c) for c in row] + [LINE_BREAK]
    return out + [IMAGE_END]


def image_token_offsets(rows, cols):
    """Offset after image_prefix of image token n = r * cols + c: r * (cols + 1) + c."""
    n = torch.arange(rows * cols)
    return (n // cols) * (cols + 1) + n % cols


# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------
@dataclass
class LuminaConfig:
    """Sizes of Lumina-mGPT's transformer. Defaults are the 7B's (config.json of the released
    repos; `model_parallel_size` sets how many q/k norm groups there are)."""
    dim: int = 4096
    n_layer: int = 32
    n_head: int = 32
    n_kv_head: int = 0          # 0: = n_head; only plain multi-head attention
    ffn_hidden: int = 11008
    vocab: int = 65536
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    qk_norm_groups: int = 1     # model_parallel_size
    swin_norm: bool = False
    image_codes: int = 8192     # VQ codebook entries: BPE ids 4 .. 4 + image_codes - 1
    max_position_embeddings: int = 4096

    def __post_init__(self):
        self.n_kv_head = self.n_kv_head or self.n_head
        if self.n_kv_head != self.n_head:
            raise ValueError(f"num_key_value_heads {self.n_kv_head} != num_attention_heads {self.n_head}: "
                             "only multi-head attention is supported")
        if self.dim % self.n_head or self.n_head % self.qk_norm_groups:
            raise ValueError(f"hidden_size {self.dim}, {self.n_head} heads and model_parallel_size "
                             f"{self.qk_norm_groups} do not divide")
        if IMAGE_FIRST + self.image_codes > IMAGE_END or self.vocab <= SIZE_BASE:
            raise ValueError(f"vocabulary {self.vocab} with {self.image_codes} image codes does not hold "
                             "Chameleon's image and layout ids")

    @property
    def head_dim(self):
        return self.dim // self.n_head

    @classmethod
    def from_dict(cls, c: dict):
        if c.get("model_type") != "chameleon":
            raise ValueError(f"model_type {c.get('model_type')!r}: not a Chameleon / Lumina-mGPT config")
        vq = c.get("vq_config") or {}
        return cls(dim=c["hidden_size"], n_layer=c["num_hidden_layers"], n_head=c["num_attention_heads"],
                   n_kv_head=c.get("num_key_value_heads") or 0, ffn_hidden=c["intermediate_size"],
                   vocab=c["vocab_size"], rope_theta=float(c.get("rope_theta", 10000.0)),
                   norm_eps=float(c.get("rms_norm_eps", 1e-5)),
                   qk_norm_groups=int(c.get("model_parallel_size", 1)), swin_norm=bool(c.get("swin_norm", False)),
                   image_codes=int(vq.get("num_embeddings", 8192)),
                   max_position_embeddings=int(c.get("max_position_embeddings", 4096)))

    def to_dict(self, torch_dtype="bfloat16"):
        return {"architectures": ["ChameleonXLLMXForConditionalGeneration"], "model_type": "chameleon",
                "hidden_size": self.dim, "num_hidden_layers": self.n_layer, "num_attention_heads": self.n_head,
                "num_key_value_heads": self.n_kv_head, "intermediate_size": self.ffn_hidden,
                "vocab_size": self.vocab, "rope_theta": self.rope_theta, "rms_norm_eps": self.norm_eps,
                "model_parallel_size": self.qk_norm_groups, "swin_norm": self.swin_norm,
                "max_position_embeddings": self.max_position_embeddings, "hidden_act": "silu",
                "attention_bias": False, "tie_word_embeddings": False, "torch_dtype": torch_dtype,
                "vq_config": {"embed_dim": 256, "num_embeddings": self.image_codes}}


# ----------------------------------------------------------------------------------------------
# The transformer
# ----------------------------------------------------------------------------------------------
class QkLayerNorm(nn.Module):
    """LayerNorm of each head's vector over head_dim; affine parameters [groups, head_dim], group g
    serving heads g * H/groups .. (g + 1) * H/groups - 1."""

    def __init__(self, groups, head_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(groups, head_dim))
        self.bias = nn.Parameter(torch.zeros(groups, head_dim))

    def forward(self, x):  # x [B, H, S, hd]
        H = x.shape[1]
        y = F.layer_norm(x.float(), x.shape[-1:], None, None, QK_NORM_EPS)
        w = self.weight.float().repeat_interleave(H // self.weight.shape[0], 0)[None, :, None, :]
        b = self.bias.float().repeat_interleave(H // self.bias.shape[0], 0)[None, :, None, :]
        return (y * w + b).type_as(x)


class ChameleonAttention(LlamaAttention):
    """LLaMA's attention with Chameleon's per-head q/k LayerNorm before RoPE."""

    def __init__(self, cfg: LuminaConfig):
        super().__init__(cfg)
        self.q_norm = QkLayerNorm(cfg.qk_norm_groups, cfg.head_dim)
        self.k_norm = QkLayerNorm(cfg.qk_norm_groups, cfg.head_dim)

    def normalise_qk(self, q, k):
        return self.q_norm(q), self.k_norm(k)


class ChameleonDecoderLayer(nn.Module):
    def __init__(self, cfg: LuminaConfig):
        super().__init__()
        self.swin = cfg.swin_norm
        self.self_attn = ChameleonAttention(cfg)
        self.mlp = LlamaMLP(cfg)  # SwiGLU, no biases, as Chameleon's
        self.input_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)

    def forward(self, x, cos, sin, mask=None, cache=None):
        if self.swin:
            h = x + self.input_layernorm(self.self_attn(x, cos, sin, mask, cache))
            return h + self.post_attention_layernorm(self.mlp(h))
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, mask, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class LuminaGen(nn.Module):
    """The transformer with the released parameter names (`model.*`, `lm_head.weight`)."""

    def __init__(self, cfg: LuminaConfig):
        super().__init__()
        self.cfg = cfg
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(cfg.vocab, cfg.dim)
        self.model.layers = nn.ModuleList([ChameleonDecoderLayer(cfg) for _ in range(cfg.n_layer)])
        self.model.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids, pos, mask=None, caches=None):
        """ids [B, S] at positions pos ([S]); mask bool [S, T] or [B, 1, S, T] (True = attend;
        default causal over the caches and ids); caches: one append-only dict per layer.
        Returns f32 logits over the whole vocabulary [B, S, vocab]."""
        x = self.model.embed_tokens(ids)
        cos, sin = rope_cos_sin(pos, self.cfg.head_dim, self.cfg.rope_theta)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, mask, None if caches is None else caches[i])
        return self.lm_head(self.model.norm(x)).float()

    def image_ids(self):
        return torch.arange(IMAGE_FIRST, IMAGE_FIRST + self.cfg.image_codes)

    def teacher_forced(self, prompt_ids, codes):
        """prompt_ids (BOS first, SEP last), codes [rows, cols] -> the conditional and the
        unconditional logits [rows * cols, vocab] at the positions that predict each image token
        (the unconditional stream: image_prefix and the image at positions 0..)."""
        rows, cols = codes.shape
        tail = image_prefix(rows, cols) + layout_tokens(codes)
        at = image_token_offsets(rows, cols) + 2  # the position before each image token
        out = []
        for seq, base in ((list(prompt_ids) + tail, len(prompt_ids)), (tail, 0)):
            ids = torch.tensor([seq])
            logits = self(ids, torch.arange(len(seq)))[0]
            out.append(logits[base + at])
        return out[0], out[1]

    @torch.no_grad()
    def generate(self, prompt_ids, rows, cols, cfg=4.0, image_top_k=2000, temperature=1.0, seed=0,
                 greedy=False):
        """inference_solver.py's loop for one image (the start and size tokens placed): VQ codes
        [rows, cols]; with greedy the argmax of the guided, restricted scores and the top-2 gaps."""
        g = torch.Generator().manual_seed(seed)
        caches = [{} for _ in self.model.layers], [{} for _ in self.model.layers]
        prefix = image_prefix(rows, cols)
        cond_ids = list(prompt_ids) + prefix
        c = self(torch.tensor([cond_ids]), torch.arange(len(cond_ids)), caches=caches[0])[0, -1]
        u = self(torch.tensor([prefix]), torch.arange(3), caches=caches[1])[0, -1]
        pos = [len(cond_ids), 3]
        codes, gaps, allowed = [], [], self.image_ids()
        for n in range(rows * cols):
            scores = u + cfg * (c - u) if cfg != 1.0 else c
            masked = torch.full_like(scores, float("-inf"))
            masked[allowed] = scores[allowed]
            top = masked.topk(2).values
            gaps.append((top[0] - top[1]).item())
            if greedy:
                t = int(masked.argmax())
            else:
                kept = masked
                if 0 < image_top_k < kept.numel():
                    kth = kept.topk(image_top_k).values[-1]
                    kept = kept.masked_fill(kept < kth, float("-inf"))
                p = (kept / max(temperature, 1e-5)).softmax(-1)
                t = int(torch.multinomial(p, 1, generator=g))
            codes.append(code_of_bpe(t))
            feed = [t] + ([LINE_BREAK] if (n + 1) % cols == 0 and n + 1 < rows * cols else [])
            for s, (stream, cache) in enumerate(((0, caches[0]), (1, caches[1]))):
                x = torch.tensor([feed])
                logits = self(x, torch.arange(pos[s], pos[s] + len(feed)), caches=cache)[0, -1]
                pos[s] += len(feed)
                if s == 0:
                    c = logits
                else:
                    u = logits
        return torch.tensor(codes).view(rows, cols), gaps


def uncond_positions_shift_invariance(model, prompt_ids, codes):
    """The unconditional logits with its stream at positions L.. behind a masked-out prompt of
    length L (how the engine lays out a CFG row) against the reference's at positions 0..: the
    largest absolute difference."""
    rows, cols = codes.shape
    tail = image_prefix(rows, cols) + layout_tokens(codes)
    L = len(prompt_ids)
    seq = list(prompt_ids) + tail
    S = len(seq)
    mask = torch.ones(S, S, dtype=torch.bool).tril()
    mask[:, :L] = False
    mask[:L, :L] = torch.eye(L, dtype=torch.bool)  # the masked prompt rows see themselves only
    shifted = model(torch.tensor([seq]), torch.arange(S), mask)[0, L:]
    plain = model(torch.tensor([tail]), torch.arange(len(tail)))[0]
    return (shifted - plain).abs().max().item()


# ----------------------------------------------------------------------------------------------
# The released folder layout
# ----------------------------------------------------------------------------------------------
def read_json(folder, name):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise ValueError(f"{folder}: no {name}")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_checkpoint_folder(folder):
    """A Lumina-mGPT folder (config.json, safetensors shards or .bin) -> LuminaGen in f32, eval
    mode. Names are checked strictly; VQ tensors (`model.vqmodel.*`), if a checkpoint has them,
    are skipped."""
    cfg = LuminaConfig.from_dict(read_json(folder, "config.json"))
    ck = CheckpointFolder(folder)
    model = LuminaGen(cfg)
    want = model.state_dict()
    got = {k: ck.get(k) for k in ck.names() if not k.startswith("model.vqmodel.")}
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    if missing or extra:
        raise ValueError(f"{folder}: " + "; ".join(([f"missing tensors: {', '.join(missing[:5])}"] if missing else []) +
                                                   ([f"unexpected tensors: {', '.join(extra[:5])}"] if extra else [])))
    for k, v in got.items():
        if list(v.shape) != list(want[k].shape):
            raise ValueError(f"{folder}: {k} has shape {list(v.shape)}, config says {list(want[k].shape)}")
    model.load_state_dict({k: v.float() for k, v in got.items()}, strict=True)
    return model.eval()


def save_checkpoint_folder(model: LuminaGen, folder, dtype=torch.bfloat16, shards=1):
    """The released layout: config.json and model.safetensors (or `shards` files with
    model.safetensors.index.json)."""
    os.makedirs(folder, exist_ok=True)
    names = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(model.cfg.to_dict(names[dtype]), f, indent=1)
    tensors = {k: v.detach().to(dtype) for k, v in model.state_dict().items()}
    keys = list(tensors)
    if shards <= 1:
        save_file(tensors, os.path.join(folder, "model.safetensors"), {"format": "pt"})
        return
    per = math.ceil(len(keys) / shards)
    index: Dict[str, str] = {}
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: tensors[k] for k in keys[s * per:(s + 1) * per]}
        save_file(part, os.path.join(folder, name), {"format": "pt"})
        index.update({k: name for k in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
        json.dump({"metadata": {}, "weight_map": index}, f, indent=1)


def random_tiny(dim=64, n_layer=2, n_head=4, ffn_hidden=128, vocab=8832, image_codes=64, groups=1,
                swin_norm=False, seed=0, scale=0.02):
    """A random tiny Lumina-mGPT (its vocabulary still holds Chameleon's layout ids); the q/k norm
    parameters random too, so a wrong grouping shows."""
    torch.manual_seed(seed)
    cfg = LuminaConfig(dim=dim, n_layer=n_layer, n_head=n_head, ffn_hidden=ffn_hidden, vocab=vocab,
                       image_codes=image_codes, qk_norm_groups=groups, swin_norm=swin_norm,
                       max_position_embeddings=4096)
    model = LuminaGen(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * torch.randn_like(p))
            else:
                p.normal_(0.0, scale if "embed" not in name else 1.0)
    return model.eval()
