"""The T5 v1.1 encoder (flan-t5-xl's text encoder) in PyTorch: our reference for the engine's
`t5_encoder` files (tools/convert_t5.py writes them).

Written from the semantics of Hugging Face transformers' `modeling_t5.py` (T5EncoderModel with
`feed_forward_proj` "gated-gelu", as T5 v1.1 and flan-t5 use it), not copied. What we rely on:
  - T5LayerNorm is an RMS norm without mean subtraction or bias, x * rsqrt(mean(x^2) + eps) * w,
    its statistics taken in (at least) float32;
  - attention scores are q k^T with NO 1/sqrt(d_kv) scaling (T5 folds it into q's init), plus a
    position bias [n_head, T, T] that only block 0 owns (`relative_attention_bias`) and every
    block reuses, looked up by the bucket of key_pos - query_pos (bidirectional buckets: half for
    each sign, half of those exact, the rest logarithmic up to max_distance);
  - the padding mask is added to that bias: keys with mask 0 get finfo(dtype).min for every
    query, so padded positions still get outputs (attending to the real tokens), as HF's do;
  - softmax in (at least) float32; blocks h += o(attn(norm(h))), h += wo(gelu_new(wi_0 x) * wi_1 x)
    with x = norm(h); a final RMS norm. No dropout (eval).

Parameter names are HF's (`shared.weight`, `encoder.block.N.layer.0.SelfAttention.q.weight`, ...),
so a released folder loads with strict name checks; the decoder and lm_head of a full
T5ForConditionalGeneration checkpoint (what google/flan-t5-xl ships) are ignored.
"""
import json
import math
import os
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from janus_model import CheckpointFolder, read_json, write_json  # noqa: E402
from safetensors_io import save_file  # noqa: E402

# What a full T5ForConditionalGeneration folder holds beyond the encoder; skipped on load.
IGNORED_PREFIXES = ("decoder.", "lm_head.")
# Some .bin checkpoints store the encoder's tied view of `shared` under its own name.
TIED_EMBEDDING = "encoder.embed_tokens.weight"
# HF T5Config's defaults: a config.json may omit any of these and HF fills them in.
HF_DEFAULTS = {"vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
               "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
               "layer_norm_epsilon": 1e-6, "feed_forward_proj": "relu"}
MODEL_TYPES = ("t5", "mt5")  # mT5 is T5 v1.1 with another vocabulary; umt5 (a bias per layer) is not
_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
                torch.float64: "float64"}


def check_feed_forward(proj):
    if proj != "gated-gelu":
        raise ValueError(f"feed_forward_proj {proj!r}: only 'gated-gelu' (T5 v1.1, flan-t5) is supported")


@dataclass
class T5Config:
    """Encoder sizes. Defaults are flan-t5-xl's."""
    d_model: int = 2048
    n_layer: int = 24           # num_layers (the encoder's)
    n_head: int = 32            # num_heads
    d_kv: int = 64
    d_ff: int = 5120
    vocab: int = 32128          # vocab_size
    num_buckets: int = 32       # relative_attention_num_buckets
    max_distance: int = 128     # relative_attention_max_distance
    eps: float = 1e-6           # layer_norm_epsilon
    feed_forward_proj: str = "gated-gelu"

    def __post_init__(self):
        check_feed_forward(self.feed_forward_proj)
        sizes = ("d_model", "n_layer", "n_head", "d_kv", "d_ff", "vocab")
        bad = [f"{k} {getattr(self, k)}" for k in sizes if int(getattr(self, k)) <= 0]
        if bad:
            raise ValueError("sizes must be positive: " + ", ".join(bad))
        max_exact = self.num_buckets // 4
        if max_exact < 1 or self.max_distance <= max_exact:
            raise ValueError(f"relative_attention_num_buckets {self.num_buckets} with max_distance "
                             f"{self.max_distance}: need at least 4 buckets and max_distance > {max_exact}")

    @property
    def inner(self):
        return self.n_head * self.d_kv

    @classmethod
    def from_dict(cls, c: dict):
        """From a parsed config.json. Raises ValueError for a model this encoder does not run."""
        if c.get("model_type", "t5") not in MODEL_TYPES:
            raise ValueError(f"model_type {c.get('model_type')!r}: not a T5 config")
        c = dict(HF_DEFAULTS, **c)
        check_feed_forward(c["feed_forward_proj"])  # named before the fields HF derives from it
        # HF derives these from feed_forward_proj but a stored value overrides it: check both.
        if c.get("dense_act_fn", "gelu_new") != "gelu_new" or not c.get("is_gated_act", True):
            raise ValueError(f"dense_act_fn {c.get('dense_act_fn')!r}, is_gated_act {c.get('is_gated_act')!r}: "
                             "only the gated gelu_new feed-forward is supported")
        return cls(d_model=int(c["d_model"]), n_layer=int(c["num_layers"]), n_head=int(c["num_heads"]),
                   d_kv=int(c["d_kv"]), d_ff=int(c["d_ff"]), vocab=int(c["vocab_size"]),
                   num_buckets=int(c["relative_attention_num_buckets"]),
                   max_distance=int(c["relative_attention_max_distance"]),
                   eps=float(c["layer_norm_epsilon"]), feed_forward_proj=c["feed_forward_proj"])

    def to_dict(self, torch_dtype="float32"):
        return {"architectures": ["T5EncoderModel"], "model_type": "t5", "d_model": self.d_model,
                "num_layers": self.n_layer, "num_heads": self.n_head, "d_kv": self.d_kv, "d_ff": self.d_ff,
                "vocab_size": self.vocab, "relative_attention_num_buckets": self.num_buckets,
                "relative_attention_max_distance": self.max_distance, "layer_norm_epsilon": self.eps,
                "feed_forward_proj": self.feed_forward_proj, "is_gated_act": True, "dense_act_fn": "gelu_new",
                "tie_word_embeddings": False, "torch_dtype": torch_dtype}


# ----------------------------------------------------------------------------------------------
# The encoder
# ----------------------------------------------------------------------------------------------
def at_least_f32(dtype):
    """HF takes norm statistics and softmax in float32; a float64 reference keeps its precision."""
    return torch.promote_types(dtype, torch.float32)


def relative_position_bucket(rel, num_buckets=32, max_distance=128):
    """HF's bidirectional `_relative_position_bucket`: rel = key_pos - query_pos (long tensor) ->
    bucket ids. Positive offsets use the upper half; within a half, offsets below max_exact are
    exact and the rest logarithmic (float32 log, truncated) up to max_distance, then clamped."""
    half = num_buckets // 2
    bucket = (rel > 0).long() * half
    rel = rel.abs()
    max_exact = half // 2
    # rel 0 gives log(0) = -inf here; torch.where below never picks it.
    large = max_exact + (torch.log(rel.float() / max_exact) / math.log(max_distance / max_exact)
                         * (half - max_exact)).long()
    large = torch.clamp(large, max=half - 1)
    return bucket + torch.where(rel < max_exact, rel, large)


def gelu_new(x):
    """The tanh approximation of GELU (HF's NewGELUActivation, T5 v1.1's "gelu_new")."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class T5LayerNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        acc = at_least_f32(x.dtype)
        var = x.to(acc).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps)).to(self.weight.dtype)


class T5Attention(nn.Module):
    def __init__(self, cfg: T5Config, has_bias_table: bool):
        super().__init__()
        self.cfg = cfg
        for name in "qkv":
            setattr(self, name, nn.Linear(cfg.d_model, cfg.inner, bias=False))
        self.o = nn.Linear(cfg.inner, cfg.d_model, bias=False)
        if has_bias_table:
            self.relative_attention_bias = nn.Embedding(cfg.num_buckets, cfg.n_head)

    def position_bias(self, T):
        """[n_head, T, T]: entry (h, i, j) is head h's bias for query i attending to key j."""
        pos = torch.arange(T, device=self.relative_attention_bias.weight.device)
        buckets = relative_position_bucket(pos[None, :] - pos[:, None], self.cfg.num_buckets, self.cfg.max_distance)
        return self.relative_attention_bias(buckets).permute(2, 0, 1)

    def forward(self, x, bias):
        """x [B, T, d_model]; bias [B, n_head, T, T] (position bias plus the padding mask)."""
        B, T, _ = x.shape
        H, dk = self.cfg.n_head, self.cfg.d_kv
        q, k, v = (getattr(self, n)(x).view(B, T, H, dk).transpose(1, 2) for n in "qkv")
        scores = q @ k.transpose(-1, -2) + bias
        weights = torch.softmax(scores.to(at_least_f32(scores.dtype)), dim=-1).to(v.dtype)
        return self.o((weights @ v).transpose(1, 2).reshape(B, T, H * dk))


class T5LayerSelfAttention(nn.Module):
    def __init__(self, cfg: T5Config, has_bias_table: bool):
        super().__init__()
        self.SelfAttention = T5Attention(cfg, has_bias_table)
        self.layer_norm = T5LayerNorm(cfg.d_model, cfg.eps)

    def forward(self, h, bias):
        return h + self.SelfAttention(self.layer_norm(h), bias)


class T5DenseGatedActDense(nn.Module):
    def __init__(self, cfg: T5Config):
        super().__init__()
        self.wi_0 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.wi_1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.wo = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        return self.wo(gelu_new(self.wi_0(x)) * self.wi_1(x))


class T5LayerFF(nn.Module):
    def __init__(self, cfg: T5Config):
        super().__init__()
        self.DenseReluDense = T5DenseGatedActDense(cfg)
        self.layer_norm = T5LayerNorm(cfg.d_model, cfg.eps)

    def forward(self, h):
        return h + self.DenseReluDense(self.layer_norm(h))


class T5Block(nn.Module):
    def __init__(self, cfg: T5Config, first: bool):
        super().__init__()
        self.layer = nn.ModuleList([T5LayerSelfAttention(cfg, first), T5LayerFF(cfg)])

    def forward(self, h, bias):
        return self.layer[1](self.layer[0](h, bias))


class T5Stack(nn.Module):
    def __init__(self, cfg: T5Config):
        super().__init__()
        self.block = nn.ModuleList([T5Block(cfg, i == 0) for i in range(cfg.n_layer)])
        self.final_layer_norm = T5LayerNorm(cfg.d_model, cfg.eps)


class T5Encoder(nn.Module):
    """HF's T5EncoderModel, parameter for parameter (the tied `encoder.embed_tokens` left out)."""

    def __init__(self, cfg: T5Config):
        super().__init__()
        self.cfg = cfg
        self.shared = nn.Embedding(cfg.vocab, cfg.d_model)
        self.encoder = T5Stack(cfg)

    @property
    def dtype(self):
        return self.shared.weight.dtype

    def attention_bias(self, mask):
        """mask [B, T] (bool or 0/1) -> [B, n_head, T, T]: block 0's position bias for every
        block, with finfo.min added at the masked keys of every query (HF's extended mask)."""
        T = mask.shape[1]
        pos = self.encoder.block[0].layer[0].SelfAttention.position_bias(T).to(self.dtype)
        keep = mask.to(self.dtype)[:, None, None, :]
        return pos[None] + (1.0 - keep) * torch.finfo(self.dtype).min

    @torch.no_grad()
    def encode(self, ids, mask=None):
        """ids [B, T] long, mask [B, T] (default all ones) -> hidden [B, T, d_model] in the
        module's dtype: the final-norm output at every position, padded ones included."""
        ids = torch.as_tensor(ids, dtype=torch.long)
        if ids.dim() != 2:
            raise ValueError(f"ids must be [batch, tokens], got shape {list(ids.shape)}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.cfg.vocab:
            raise ValueError(f"token ids must be in [0, {self.cfg.vocab})")
        mask = torch.ones_like(ids) if mask is None else torch.as_tensor(mask)
        if mask.shape != ids.shape:
            raise ValueError(f"mask shape {list(mask.shape)} != ids shape {list(ids.shape)}")
        bias = self.attention_bias(mask)
        h = self.shared(ids)
        for blk in self.encoder.block:
            h = blk(h, bias)
        return self.encoder.final_layer_norm(h)


# ----------------------------------------------------------------------------------------------
# Random tiny models and Hugging Face folders
# ----------------------------------------------------------------------------------------------
def random_tiny(d_model=64, n_layer=2, n_head=4, d_kv=16, d_ff=96, vocab=128, seed=0, scale=1.0):
    """A random encoder whose every op matters: norm weights 1 + 0.1 N(0, 1) (a wrong norm
    shows), a N(0, 1) bias table and embeddings, matrices N(0, scale^2 / fan_in) so activations
    stay O(1); q gets T5's own extra 1/sqrt(d_kv), standing in for the scaling T5 leaves out."""
    cfg = T5Config(d_model=d_model, n_layer=n_layer, n_head=n_head, d_kv=d_kv, d_ff=d_ff, vocab=vocab)
    model = T5Encoder(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("layer_norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name == "shared.weight" or name.endswith("relative_attention_bias.weight"):
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                std = scale / math.sqrt(p.shape[1]) / (math.sqrt(d_kv) if name.endswith(".q.weight") else 1.0)
                p.copy_(std * torch.randn(p.shape, generator=g))
    return model.eval()


def save_checkpoint_folder(model: T5Encoder, folder, dtype=torch.float32, shards=1):
    """config.json and model.safetensors, or `shards` files with model.safetensors.index.json
    ({"metadata": {"total_size"}, "weight_map": {name: file}}, as HF writes it)."""
    os.makedirs(folder, exist_ok=True)
    write_json(folder, "config.json", model.cfg.to_dict(_DTYPE_NAMES[dtype]))
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
    names = list(tensors)
    shards = max(1, min(shards, len(names)))
    if shards == 1:
        save_file(tensors, os.path.join(folder, "model.safetensors"), {"format": "pt"})
        return
    per = -(-len(names) // shards)
    weight_map, total = {}, 0
    for s in range(shards):
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: tensors[k] for k in names[s * per:(s + 1) * per]}
        save_file(part, os.path.join(folder, fname), {"format": "pt"})
        for k, t in part.items():
            weight_map[k] = fname
            total += t.numel() * t.element_size()
    write_json(folder, "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})


def read_config(folder):
    """T5Config of a folder's config.json; errors name the file, not the folder."""
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):
        raise ValueError("no config.json (not a Hugging Face checkpoint folder)")
    try:
        return T5Config.from_dict(read_json(folder, "config.json"))
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"config.json: {e!r}") from None
    except ValueError as e:
        raise ValueError(f"config.json: {e}") from None


def is_ignored(name):
    return name.startswith(IGNORED_PREFIXES) or name == TIED_EMBEDDING


def embedding_source(ck):
    """`shared.weight`, or the encoder's tied copy when a checkpoint kept only that one."""
    return "shared.weight" if "shared.weight" in ck or TIED_EMBEDDING not in ck else TIED_EMBEDDING


def source_name(ck, name):
    """Where the checkpoint keeps our parameter `name`."""
    return embedding_source(ck) if name == "shared.weight" else name


def name_problems(ck, want):
    """Strict names: every parameter in `want` present, nothing unknown besides what is ignored.
    Returns the problems as text ('' when none)."""
    missing = [k for k in want if source_name(ck, k) not in ck]
    used = {source_name(ck, k) for k in want}
    extra = [k for k in ck.names() if k not in used and not is_ignored(k)]
    return "; ".join(([f"missing tensors: {', '.join(missing[:8])}"] if missing else []) +
                     ([f"unexpected tensors: {', '.join(extra[:8])}"] if extra else []))


def load_checkpoint_folder(folder, dtype=torch.float32):
    """A Hugging Face T5 folder (config.json; model.safetensors, shards with their index, or
    pytorch_model*.bin) -> T5Encoder in `dtype`, eval mode. The decoder, lm_head and the tied
    encoder.embed_tokens are ignored; any other missing, unexpected or misshapen tensor is a
    ValueError naming it."""
    try:
        cfg = read_config(folder)
    except ValueError as e:
        raise ValueError(f"{folder}: {e}") from None
    ck = CheckpointFolder(folder)
    model = T5Encoder(cfg)
    want = model.state_dict()
    problems = name_problems(ck, want)
    if problems:
        raise ValueError(f"{folder}: {problems}")
    got = {}
    for k in want:
        t = ck.get(source_name(ck, k))
        if list(t.shape) != list(want[k].shape):
            raise ValueError(f"{folder}: tensor {k} has shape {list(t.shape)}, config.json says {list(want[k].shape)}")
        if not t.is_floating_point():
            raise ValueError(f"{folder}: tensor {k} has dtype {t.dtype}, expected a float tensor")
        got[k] = t.to(dtype)
    model = model.to(dtype)
    model.load_state_dict(got, strict=True)
    return model.eval()
