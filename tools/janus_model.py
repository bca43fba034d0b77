"""Janus-Pro's image-generation path in PyTorch: our reference for the engine's `janus-pro` family.

DeepSeek's released code (github.com/deepseek-ai/Janus, `janus/models/modeling_vlm.py`,
`generation_inference.py`) is the specification; this file is written from it, not copied.
Only the generation path is here: a LLaMA trunk (Hugging Face `LlamaModel` semantics: RMSNorm,
SwiGLU, 1D RoPE in the rotate-half convention, causal multi-head attention), the text
embeddings, and the generation modules:

  gen_embed    nn.Embedding(image_token_size, 8)           image token -> 8-d code embedding
  gen_aligner  Linear(8, D), GELU (erf), Linear(D, D)      -> the trunk's input for an image token
  gen_head     Linear(D, image_token_embed), GELU (erf), Linear(image_token_embed, image_token_size)
               on the trunk's last hidden state AFTER its final norm -> image-token logits

Module and parameter names are the released checkpoint's (`language_model.model.layers.0.
self_attn.q_proj.weight`, `gen_aligner.layers.2.bias`, `gen_head.output_mlp_projector.weight`,
...), so a released folder's generation weights load with strict key checks. The understanding
side (`vision_model.*`, `aligner.*`, `language_model.lm_head.weight`) is not built and is skipped
with a note. The VQ decoder (`gen_vision_model.*`, Janus's "VQ-16") is LlamaGen's VQ-16 module
for module and name for name, so `vkspec_models.VQModel` loads it (its `quantize.codebook_used`
usage counter is dropped).

Generation (`JanusGen.generate`, as `generation_inference.py`): the prompt text is the processor's
SFT template (`sft_prompt`), tokenized with BOS; CFG runs two rows, the prompt and the
unconditional row (the same ids with every token but the first and the last replaced by the pad
id, `uncond_ids`); each step the guided logits are `u + cfg * (c - u)` (default cfg 5,
temperature 1, no top-k), the sampled token is fed to both rows as `gen_aligner(gen_embed(t))`.
576 tokens = a 24 x 24 grid at 384 px (VQ-16 downsamples by 16).

Also here: the released folder layout (`JanusConfig.from_folder`, `CheckpointFolder`,
`load_checkpoint_folder`, `save_checkpoint_folder`) and a small byte-level BPE tokenizer in
Hugging Face's tokenizer.json format (`build_byte_bpe`, `ByteBPE`) for the tiny test models.
"""
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_header, save_file  # noqa: E402
from vkspec_models import RMSNorm, VQModel, filter_logits, vq_config_from_metadata  # noqa: E402

# The released processor's strings (janus/models/processing_vlm.py, janus/utils/conversation.py,
# template "deepseek"): roles, separators, tags.
BOS_TOKEN = "<｜begin▁of▁sentence｜>"
EOS_TOKEN = "<｜end▁of▁sentence｜>"
PAD_TOKEN = "<｜▁pad▁｜>"
IMAGE_START_TAG = "<begin_of_image>"
IMAGE_END_TAG = "<end_of_image>"
IMAGE_TAG = "<image_placeholder>"
USER_ROLE = "<|User|>"
ASSISTANT_ROLE = "<|Assistant|>"
# What apply_sft_template_for_multi_turn_prompts([{User: PROMPT}, {Assistant: ""}],
# system_prompt="") followed by image_start_tag gives; BOS is added by the tokenizer, not here.
PROMPT_TEMPLATE = USER_ROLE + ": {prompt}\n\n" + ASSISTANT_ROLE + ":" + IMAGE_START_TAG
SPECIAL_TOKENS = [BOS_TOKEN, EOS_TOKEN, PAD_TOKEN, IMAGE_TAG, IMAGE_START_TAG, IMAGE_END_TAG,
                  USER_ROLE, ASSISTANT_ROLE]

# Hugging Face LlamaConfig's defaults: the released Janus-Pro-7B config.json lists only
# num_hidden_layers, vocab_size, max_position_embeddings, torch_dtype and model_type.
LLAMA_DEFAULTS = {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
                  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": None,
                  "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-6,
                  "rope_theta": 10000.0, "rope_scaling": None, "attention_bias": False,
                  "mlp_bias": False}
GEN_PREFIXES = ("language_model.model.", "gen_embed.", "gen_aligner.", "gen_head.")
VQ_PREFIX = "gen_vision_model."
UNDERSTANDING_PREFIXES = ("vision_model.", "aligner.", "language_model.lm_head.")


def sft_prompt(prompt: str) -> str:
    """The text generation_inference.py tokenizes: the SFT template of [User: prompt,
    Assistant: ""] with an empty system prompt, stripped, then `<begin_of_image>`. (An empty
    prompt gives "<|User|>:<|Assistant|>:<begin_of_image>", as the released template does.)"""
    p = prompt.strip()
    text = (USER_ROLE + ": " + p + "\n\n" if p else USER_ROLE + ":") + ASSISTANT_ROLE + ":"
    return text.strip() + IMAGE_START_TAG


def uncond_ids(ids, pad_id):
    """The CFG row of generation_inference.py: the same ids, all but the first (BOS) and the last
    (`<begin_of_image>`) replaced by pad_id. ids: 1-D list or tensor."""
    u = torch.as_tensor(ids, dtype=torch.long).clone()
    if u.numel() > 2:
        u[1:-1] = pad_id
    return u


# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------
@dataclass
class JanusConfig:
    """Sizes of the generation path. Defaults are Janus-Pro-1B's."""
    dim: int = 2048             # language_config.hidden_size
    n_layer: int = 24           # num_hidden_layers
    n_head: int = 16            # num_attention_heads
    ffn_hidden: int = 5632      # intermediate_size
    text_vocab: int = 102400    # language_config.vocab_size (embed_tokens rows)
    image_vocab: int = 16384    # gen_vision_config.params.image_token_size (VQ codebook)
    image_embed_dim: int = 8    # gen_vision_config.params.n_embed (= gen_aligner input_dim)
    head_hidden: int = 0        # gen_head_config.params.image_token_embed (0: = dim)
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6      # rms_norm_eps
    grid: int = 24              # token grid side (576 tokens at 384 px)
    n_kv_head: int = 0          # num_key_value_heads (0: = n_head); only n_head is supported
    max_position_embeddings: int = 16384

    def __post_init__(self):
        self.head_hidden = self.head_hidden or self.dim
        self.n_kv_head = self.n_kv_head or self.n_head

    @property
    def head_dim(self):
        return self.dim // self.n_head

    @property
    def num_image_tokens(self):
        return self.grid * self.grid

    @classmethod
    def from_dict(cls, c: dict, num_image_tokens: int = 576):
        """From a released config.json (already parsed). Raises ValueError for a non-Janus
        config or one this generation path cannot run."""
        missing = [k for k in ("language_config", "gen_head_config", "gen_aligner_config",
                               "gen_vision_config") if k not in c]
        if missing:
            raise ValueError("not a Janus config.json (model_type " + repr(c.get("model_type")) +
                             "): missing " + ", ".join(missing))
        lang = dict(LLAMA_DEFAULTS, **c["language_config"])
        head = c["gen_head_config"].get("params", {})
        align = c["gen_aligner_config"].get("params", {})
        vis = c["gen_vision_config"].get("params", {})
        if c["gen_vision_config"].get("cls", "VQ-16") != "VQ-16":
            raise ValueError(f"gen_vision_config.cls {c['gen_vision_config'].get('cls')!r}: only VQ-16 is known")
        if lang["hidden_act"] != "silu":
            raise ValueError(f"language_config.hidden_act {lang['hidden_act']!r}: only silu (SwiGLU)")
        if lang.get("rope_scaling"):
            raise ValueError(f"language_config.rope_scaling {lang['rope_scaling']!r}: only plain RoPE")
        if lang.get("attention_bias") or lang.get("mlp_bias"):
            raise ValueError("language_config: attention or MLP biases are not supported")
        if align.get("projector_type", "mlp_gelu") != "mlp_gelu" or int(align.get("depth", 2)) != 2:
            raise ValueError(f"gen_aligner_config.params {align}: expected projector_type mlp_gelu, depth 2")
        dim = int(lang["hidden_size"])
        cfg = cls(dim=dim, n_layer=int(lang["num_hidden_layers"]), n_head=int(lang["num_attention_heads"]),
                  ffn_hidden=int(lang["intermediate_size"]), text_vocab=int(lang["vocab_size"]),
                  image_vocab=int(vis.get("image_token_size", head.get("image_token_size", 16384))),
                  image_embed_dim=int(vis.get("n_embed", 8)),
                  head_hidden=int(head.get("image_token_embed", dim)),
                  rope_theta=float(lang["rope_theta"]), norm_eps=float(lang["rms_norm_eps"]),
                  grid=math.isqrt(num_image_tokens), n_kv_head=int(lang["num_key_value_heads"] or 0),
                  max_position_embeddings=int(lang["max_position_embeddings"]))
        if cfg.grid * cfg.grid != num_image_tokens:
            raise ValueError(f"num_image_tokens {num_image_tokens} is not a square grid")
        if dim % cfg.n_head or ("head_dim" in lang and int(lang["head_dim"]) != dim // cfg.n_head):
            raise ValueError(f"hidden_size {dim} with {cfg.n_head} heads: head_dim must be hidden_size / heads")
        if cfg.head_dim % 2:
            raise ValueError(f"head_dim {cfg.head_dim} must be even (RoPE pairs)")
        checks = [("gen_aligner_config.params.input_dim", align.get("input_dim", cfg.image_embed_dim), cfg.image_embed_dim),
                  ("gen_aligner_config.params.n_embed", align.get("n_embed", dim), dim),
                  ("gen_head_config.params.n_embed", head.get("n_embed", dim), dim),
                  ("gen_head_config.params.image_token_size", head.get("image_token_size", cfg.image_vocab), cfg.image_vocab)]
        for name, got, want in checks:
            if int(got) != want:
                raise ValueError(f"{name} = {got}, expected {want}")
        return cfg

    @classmethod
    def from_folder(cls, folder: str):
        """config.json of a released-layout folder; the grid comes from processor_config.json's
        num_image_tokens (576 when absent: Janus generates 384 px with VQ-16)."""
        path = os.path.join(folder, "config.json")
        if not os.path.isfile(path):
            raise ValueError(f"{folder}: no config.json (not a Hugging Face checkpoint folder)")
        with open(path, encoding="utf-8") as f:
            c = json.load(f)
        return cls.from_dict(c, read_json(folder, "processor_config.json").get("num_image_tokens", 576))

    def released_config(self, torch_dtype="bfloat16", image_size=384):
        """config.json in the released layout (every LlamaConfig field we rely on written out)."""
        lang = {"hidden_size": self.dim, "intermediate_size": self.ffn_hidden,
                "max_position_embeddings": self.max_position_embeddings, "model_type": "llama",
                "num_attention_heads": self.n_head, "num_hidden_layers": self.n_layer,
                "num_key_value_heads": self.n_kv_head, "rms_norm_eps": self.norm_eps,
                "rope_theta": self.rope_theta, "torch_dtype": torch_dtype, "vocab_size": self.text_vocab}
        mlp = {"depth": 2, "projector_type": "mlp_gelu", "n_embed": self.dim}
        return {
            "aligner_config": {"cls": "MlpProjector", "model_type": "aligner", "params": dict(mlp, input_dim=1024)},
            "architectures": ["MultiModalityCausalLM"],
            "gen_aligner_config": {"cls": "MlpProjector", "model_type": "gen_aligner",
                                   "params": dict(mlp, input_dim=self.image_embed_dim)},
            "gen_head_config": {"cls": "vision_head", "model_type": "gen_head",
                                "params": {"image_token_embed": self.head_hidden,
                                           "image_token_size": self.image_vocab, "n_embed": self.dim}},
            "gen_vision_config": {"cls": "VQ-16", "model_type": "gen_vision",
                                  "params": {"image_token_size": self.image_vocab, "n_embed": self.image_embed_dim}},
            "language_config": lang,
            "model_type": "multi_modality",
            "torch_dtype": torch_dtype,
            "transformers_version": "4.33.1",
            "vision_config": {"cls": "CLIPVisionTower", "model_type": "vision",
                              "params": {"image_size": image_size, "model_name": "siglip_large_patch16_384",
                                         "select_feature": "same", "select_layer": -1}},
        }


def read_json(folder, name):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ----------------------------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------------------------
def rope_cos_sin(pos, head_dim, theta):
    """Hugging Face Llama's 1D RoPE: pos [..., S] -> cos, sin [..., S, head_dim] (f32), the
    frequency of index i (and i + head_dim/2) theta^(-2i/head_dim)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    ang = pos.to(torch.float32)[..., None] * inv
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


def apply_rope_half(x, cos, sin):
    """x [B, H, S, D]; cos/sin [S, D] or [B, S, D]. Pairs (i, i + D/2) rotate together."""
    if cos.dim() == 3:
        cos, sin = cos[:, None], sin[:, None]
    return (x.float() * cos + rotate_half(x.float()) * sin).type_as(x)


class LlamaAttention(nn.Module):
    """Hugging Face's LlamaAttention (plain multi-head); cfg needs dim, n_head and head_dim."""

    def __init__(self, cfg):
        super().__init__()
        self.n_head, self.head_dim = cfg.n_head, cfg.head_dim
        self.q_proj = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.k_proj = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.v_proj = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.o_proj = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def normalise_qk(self, q, k):
        """q and k [B, H, S, hd] before RoPE: as they are (Chameleon's layer norms them)."""
        return q, k

    def forward(self, x, cos, sin, mask=None, cache=None):
        B, S, D = x.shape

        def heads(t):
            return t.view(B, S, self.n_head, self.head_dim).transpose(1, 2)
        q, k = self.normalise_qk(heads(self.q_proj(x)), heads(self.k_proj(x)))
        q, k = apply_rope_half(q, cos, sin), apply_rope_half(k, cos, sin)
        v = heads(self.v_proj(x))
        if cache is not None:  # append-only: dict with 'k', 'v' [B, H, T, hd]
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        if mask is None:
            T = k.shape[2]
            mask = torch.ones(S, T, dtype=torch.bool, device=x.device).tril(T - S)
        att = att.float().masked_fill(~mask, float("-inf")).softmax(-1).type_as(q)
        return self.o_proj((att @ v).transpose(1, 2).reshape(B, S, D))


class LlamaMLP(nn.Module):
    def __init__(self, cfg: JanusConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.dim, cfg.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(cfg.dim, cfg.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_hidden, cfg.dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: JanusConfig):
        super().__init__()
        self.self_attn = LlamaAttention(cfg)
        self.mlp = LlamaMLP(cfg)
        self.input_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)

    def forward(self, x, cos, sin, mask=None, cache=None):
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, mask, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class LlamaTrunk(nn.Module):
    """language_model.model: embed_tokens, layers, norm (HF LlamaModel)."""

    def __init__(self, cfg: JanusConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.text_vocab, cfg.dim)
        self.layers = nn.ModuleList([LlamaDecoderLayer(cfg) for _ in range(cfg.n_layer)])
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)


class MlpGelu(nn.Module):
    """MlpProjector(projector_type mlp_gelu, depth 2): layers = Linear, GELU, Linear."""

    def __init__(self, cin, dim):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(cin, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        return self.layers(x)


class VisionHead(nn.Module):
    def __init__(self, dim, hidden, vocab):
        super().__init__()
        self.output_mlp_projector = nn.Linear(dim, hidden)
        self.vision_activation = nn.GELU()
        self.vision_head = nn.Linear(hidden, vocab)

    def forward(self, h):
        return self.vision_head(self.vision_activation(self.output_mlp_projector(h)))


class JanusGen(nn.Module):
    """Janus-Pro's generation path with the released parameter names.

    Sequence: the prompt's text embeddings (positions 0..L-1, the last one `<begin_of_image>`),
    then image token n at position L + n. The hidden state at position L - 1 + n (after the final
    norm) gives, through gen_head, the logits of image token n.
    """

    def __init__(self, cfg: JanusConfig):
        super().__init__()
        if cfg.n_kv_head != cfg.n_head:
            raise ValueError(f"num_key_value_heads {cfg.n_kv_head} != num_attention_heads {cfg.n_head}: "
                             "only multi-head attention is supported")
        self.cfg = cfg
        self.language_model = nn.Module()
        self.language_model.model = LlamaTrunk(cfg)
        self.gen_embed = nn.Embedding(cfg.image_vocab, cfg.image_embed_dim)
        self.gen_aligner = MlpGelu(cfg.image_embed_dim, cfg.dim)
        self.gen_head = VisionHead(cfg.dim, cfg.head_hidden, cfg.image_vocab)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    @property
    def trunk(self):
        return self.language_model.model

    def embed_text(self, ids):
        return self.trunk.embed_tokens(ids)

    def embed_image(self, tokens):
        """gen_aligner(gen_embed(t)): the trunk input of image tokens (prepare_gen_img_embeds)."""
        return self.gen_aligner(self.gen_embed(tokens))

    def hidden(self, x, pos, mask=None, caches=None):
        """x [B, S, D] embeddings at positions pos ([S] or [B, S]); mask bool [S, T] or
        [B, 1, S, T] (True = attend; default causal over the cache and x); caches: one dict per
        layer (append-only). Returns the last hidden state after the final norm."""
        cos, sin = rope_cos_sin(pos, self.cfg.head_dim, self.cfg.rope_theta)
        for i, layer in enumerate(self.trunk.layers):
            x = layer(x, cos, sin, mask, None if caches is None else caches[i])
        return self.trunk.norm(x)

    def image_logits(self, h):
        return self.gen_head(h).float()

    def forward_train(self, prefix_ids, prefix_mask, image_tokens, return_hidden=False):
        """Teacher forcing. prefix_ids [B, L] long, left-padded (prefix_mask [B, L] bool, False on
        padding), image_tokens [B, N] long. Returns image logits [B, N, image_vocab]: position
        L - 1 (the last prompt token, `<begin_of_image>`) predicts token 0, position L + n - 1
        predicts token n. Padding is hidden from every query but itself (a pad query sees only
        itself, so it stays finite; its output is unused). Positions are the slot indices
        0..L+N-2: RoPE scores depend on offsets only, so with the padding masked this equals the
        unpadded prompt at positions 0..; with return_hidden also the normed hidden states
        [B, N, dim] those logits come from (what draft heads read)."""
        B, L = prefix_ids.shape
        N = image_tokens.shape[1]
        x = torch.cat([self.embed_text(prefix_ids), self.embed_image(image_tokens[:, :-1])], dim=1)
        S = x.shape[1]
        valid = torch.cat([prefix_mask.bool(), torch.ones(B, N - 1, dtype=torch.bool, device=x.device)], dim=1)
        mask = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()[None] & valid[:, None, :]
        mask |= torch.eye(S, dtype=torch.bool, device=x.device)[None]
        h = self.hidden(x, torch.arange(S, device=x.device), mask[:, None])[:, L - 1:]
        return (self.image_logits(h), h) if return_hidden else self.image_logits(h)

    def teacher_forced_logits(self, ids_rows, tokens, return_hidden=False):
        """ids_rows [R, L] (unpadded, e.g. [ids; uncond_ids]), tokens [n] fed after them ->
        gen_head logits at every position [R, L + n, image_vocab] (f32), and with return_hidden
        the normed hidden states [R, L + n, dim] too."""
        R = ids_rows.shape[0]
        toks = torch.as_tensor(tokens, dtype=torch.long).reshape(1, -1).expand(R, -1)
        x = torch.cat([self.embed_text(ids_rows), self.embed_image(toks)], dim=1)
        h = self.hidden(x, torch.arange(x.shape[1]))
        return (self.image_logits(h), h) if return_hidden else self.image_logits(h)

    @torch.no_grad()
    def generate(self, ids, cfg=5.0, temperature=1.0, top_k=0, greedy=False, seed=0, pad_id=None,
                 top_p=1.0, n_tokens=None, generator=None):
        """generation_inference.py for one prompt: ids (1-D, BOS first, `<begin_of_image>` last),
        rows [ids; uncond_ids(ids, pad_id)] with a KV cache, logits = u + cfg * (c - u) each step.
        Sampling: softmax(logits / temperature) (top-k / top-p as vkspec_models.filter_logits,
        off by default), torch.multinomial with a generator seeded by `seed` (or `generator`).
        greedy: argmax. pad_id: the tokenizer's `<｜▁pad▁｜>` id (tokenizer_ids(folder)).
        n_tokens: how many (default grid^2).
        Returns (tokens [n] long, gaps [n] f32 = top-1 minus top-2 guided logit, or None when
        sampling)."""
        self.eval()
        if pad_id is None:
            raise ValueError("pad_id is required (the tokenizer's <｜▁pad▁｜> id)")
        n = n_tokens or self.cfg.num_image_tokens
        ids = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
        rows = torch.stack([ids, uncond_ids(ids, pad_id)])
        caches = [dict() for _ in self.trunk.layers]
        g = generator or torch.Generator().manual_seed(seed)
        x = self.embed_text(rows)
        pos = torch.arange(ids.numel())
        out = torch.empty(n, dtype=torch.long)
        gaps = torch.empty(n) if greedy else None
        for i in range(n):
            logits = self.image_logits(self.hidden(x, pos, caches=caches)[:, -1])
            c, u = logits[0], logits[1]
            guided = u + cfg * (c - u)
            if greedy:
                top = torch.topk(guided, 2)[0]
                out[i], gaps[i] = guided.argmax(), top[0] - top[1]
            else:
                probs = filter_logits(guided / max(temperature, 1e-5), top_k, top_p).softmax(-1)
                out[i] = torch.multinomial(probs, 1, generator=g)[0]
            x = self.embed_image(out[i].repeat(2)).unsqueeze(1)
            pos = pos[-1:] + 1
        return out, gaps


# ----------------------------------------------------------------------------------------------
# Released checkpoint folders
# ----------------------------------------------------------------------------------------------
class CheckpointFolder:
    """A Hugging Face checkpoint folder's tensors, read one at a time.

    safetensors (model.safetensors, or shards through model.safetensors.index.json) are read by
    seeking to each tensor, so nothing else is in memory; pytorch_model*.bin (one file or shards
    through pytorch_model.bin.index.json) are torch.load'ed a shard at a time (weights_only
    where the torch has it), the current shard kept until another is asked for. `names()` lists
    every tensor in shard order (reading in that order loads each .bin shard once)."""

    def __init__(self, folder):
        self.folder = folder
        self._shard_of: Dict[str, str] = {}
        self._st_info: Dict[str, tuple] = {}
        self._bin_name, self._bin = None, None
        st_index = os.path.join(folder, "model.safetensors.index.json")
        bin_index = os.path.join(folder, "pytorch_model.bin.index.json")
        if os.path.isfile(st_index) or os.path.isfile(os.path.join(folder, "model.safetensors")):
            self.kind = "safetensors"
            shards = self._from_index(st_index) if os.path.isfile(st_index) else None
            if shards is None:
                shards = ["model.safetensors"]
                self._shard_of = {}
            for s in shards:
                header, start = read_header(os.path.join(folder, s))
                header.pop("__metadata__", None)
                for k, info in header.items():
                    if self._shard_of.get(k, s) != s:
                        raise ValueError(f"{s}: tensor {k} is also in {self._shard_of[k]}")
                    self._shard_of[k] = s
                    self._st_info[k] = (s, start, info)
            unlisted = [k for k in self._shard_of if k not in self._st_info]
            if unlisted:
                raise ValueError("the index lists tensors no shard holds: " + ", ".join(unlisted[:5]))
        elif os.path.isfile(bin_index) or os.path.isfile(os.path.join(folder, "pytorch_model.bin")):
            self.kind = "bin"
            if os.path.isfile(bin_index):
                self._from_index(bin_index)
            else:
                self._load_bin("pytorch_model.bin")
                self._shard_of = {k: "pytorch_model.bin" for k in self._bin}
        else:
            raise ValueError(f"{folder}: no model.safetensors, safetensors index, pytorch_model.bin "
                             "or its index")

    def _from_index(self, path):
        with open(path, encoding="utf-8") as f:
            wm = json.load(f).get("weight_map")
        if not isinstance(wm, dict) or not wm:
            raise ValueError(f"{path}: no weight_map")
        self._shard_of = dict(wm)
        return list(dict.fromkeys(wm.values()))

    def _load_bin(self, name):
        if self._bin_name == name:
            return
        self._bin = None  # drop the previous shard before loading the next
        path = os.path.join(self.folder, name)
        try:
            sd = torch.load(path, map_location="cpu", weights_only=True)
        except TypeError:  # a torch without weights_only
            sd = torch.load(path, map_location="cpu")
        if isinstance(sd, dict) and "state_dict" in sd and isinstance(sd["state_dict"], dict):
            sd = sd["state_dict"]
        if not isinstance(sd, dict):
            raise ValueError(f"{path}: not a state dict")
        self._bin_name, self._bin = name, sd

    def names(self):
        order = list(dict.fromkeys(self._shard_of.values()))
        return sorted(self._shard_of, key=lambda k: order.index(self._shard_of[k]))

    def __contains__(self, name):
        return name in self._shard_of

    def shape(self, name):
        """Known without reading the data for safetensors; None for .bin (read the tensor)."""
        return list(self._st_info[name][2]["shape"]) if name in self._st_info else None

    def get(self, name) -> torch.Tensor:
        if name not in self._shard_of:
            raise KeyError(name)
        if self.kind == "bin":
            self._load_bin(self._shard_of[name])
            if name not in self._bin:
                raise ValueError(f"{self._shard_of[name]}: tensor {name} (listed in the index) is missing")
            return self._bin[name]
        shard, start, info = self._st_info[name]
        b, e = info["data_offsets"]
        with open(os.path.join(self.folder, shard), "rb") as f:
            f.seek(start + b)
            raw = f.read(e - b)
        if len(raw) != e - b:
            raise ValueError(f"{shard}: tensor {name} runs past the end of the file")
        return tensor_from_bytes(raw, info["dtype"], info["shape"], f"{shard}: {name}")


_ST_TORCH = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
             "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
             "U8": torch.uint8, "BOOL": torch.bool}


def tensor_from_bytes(raw, dtype, shape, what):
    if dtype not in _ST_TORCH:
        raise ValueError(f"{what}: unsupported dtype {dtype}")
    t = torch.frombuffer(bytearray(raw), dtype=_ST_TORCH[dtype]) if raw else torch.empty(0, dtype=_ST_TORCH[dtype])
    n = math.prod(shape)
    if t.numel() != n:
        raise ValueError(f"{what}: {t.numel()} elements, shape {shape} says {n}")
    if sys.byteorder != "little":
        raise ValueError("big-endian hosts are not supported")
    return t.reshape(shape)


def classify_key(k):
    """'gen', 'vq', 'understanding' (skipped), 'rope' (HF's inv_freq buffer: recomputed) or None."""
    if k.endswith("rotary_emb.inv_freq"):
        return "rope"
    if k.startswith(GEN_PREFIXES):
        return "gen"
    if k.startswith(VQ_PREFIX):
        return "vq"
    if k.startswith(UNDERSTANDING_PREFIXES):
        return "understanding"
    return None


def vq_from_tensors(sd):
    """vkspec_models.VQModel from `gen_vision_model.*` tensors (prefix stripped), its sizes
    inferred from their shapes as convert_llamagen.py does for LlamaGen's VQ."""
    from convert_llamagen import vq_metadata  # the one shape -> VQ metadata rule
    sd = {k: v for k, v in sd.items() if k != "quantize.codebook_used"}
    m = VQModel(vq_config_from_metadata({k: str(v) for k, v in vq_metadata(sd).items()})).eval()
    m.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
    return m


def load_checkpoint_folder(folder, with_vq=False, quiet=False):
    """A released-layout folder -> (JanusGen in f32, eval mode; VQModel or None). Generation
    tensors are checked strictly (missing and unexpected names are errors); understanding
    tensors are skipped with a note on stderr."""
    cfg = JanusConfig.from_folder(folder)
    ck = CheckpointFolder(folder)
    model = JanusGen(cfg)
    want = model.state_dict()
    got, vq_sd, skipped, unknown = {}, {}, [], []
    for k in ck.names():
        kind = classify_key(k)
        if kind == "gen":
            got[k] = ck.get(k)
        elif kind == "vq" and with_vq:
            vq_sd[k[len(VQ_PREFIX):]] = ck.get(k)
        elif kind in ("understanding", "rope", "vq"):
            skipped.append(k)
        else:
            unknown.append(k)
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want] + unknown
    if missing or extra:
        raise ValueError(f"{folder}: " + "; ".join(
            ([f"missing tensors: {', '.join(missing)}"] if missing else []) +
            ([f"unexpected tensors: {', '.join(extra)}"] if extra else [])))
    for k, v in got.items():
        if list(v.shape) != list(want[k].shape):
            raise ValueError(f"{folder}: {k} has shape {list(v.shape)}, config says {list(want[k].shape)}")
    model.load_state_dict({k: v.float() for k, v in got.items()}, strict=True)
    if skipped and not quiet:
        groups = sorted({k.split(".")[0] + ("." + k.split(".")[1] if k.startswith("language_model.") else "")
                         for k in skipped})
        print(f"note: {len(skipped)} tensors not used for generation skipped ({', '.join(groups)})", file=sys.stderr)
    vq = None
    if with_vq:
        if not vq_sd:
            raise ValueError(f"{folder}: no gen_vision_model.* tensors (the VQ decoder)")
        vq = vq_from_tensors(vq_sd)
    return model.eval(), vq


def tokenizer_ids(folder):
    """{bos_id, pad_id, image_start_id, add_bos} from the folder's tokenizer files: token
    strings from tokenizer_config.json / special_tokens_map.json / processor_config.json (the
    processor's defaults when absent), ids from tokenizer.json's added tokens (or its vocab)."""
    tj = read_json(folder, "tokenizer.json")
    if not tj:
        raise ValueError(f"{folder}: no tokenizer.json")
    vocab = dict(tj.get("model", {}).get("vocab", {}))
    vocab.update({a["content"]: a["id"] for a in tj.get("added_tokens", [])})
    tc, sm, pc = (read_json(folder, n) for n in ("tokenizer_config.json", "special_tokens_map.json",
                                                  "processor_config.json"))

    def token(entry, default):
        v = entry if entry is not None else default
        return v["content"] if isinstance(v, dict) else v
    bos = token(tc.get("bos_token", sm.get("bos_token")), BOS_TOKEN)
    pad = token(pc.get("pad_tag"), PAD_TOKEN)
    start = token(pc.get("image_start_tag"), IMAGE_START_TAG)
    out = {}
    for key, tok in (("bos_id", bos), ("pad_id", pad), ("image_start_id", start)):
        if tok not in vocab:
            raise ValueError(f"{folder}: tokenizer.json has no token {tok!r}")
        out[key] = vocab[tok]
    # BOS: LlamaTokenizerFast adds it when add_bos_token (default true) through its post-processor;
    # a tokenizer.json whose TemplateProcessing starts with BOS adds it by itself.
    pp = tj.get("post_processor") or {}
    in_template = any(p.get("SpecialToken", {}).get("id") == bos for p in pp.get("single", []))
    out["add_bos"] = bool(in_template or tc.get("add_bos_token", tc.get("tokenizer_class") == "LlamaTokenizerFast"))
    return out


# ----------------------------------------------------------------------------------------------
# Writing a folder in the released layout
# ----------------------------------------------------------------------------------------------
_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


def save_checkpoint_folder(model: JanusGen, folder, tokenizer_json_path, vq: Optional[VQModel] = None,
                           dtype=torch.float32, shards=1, understanding=False):
    """Write `model` (and the VQ decoder, when given, as `gen_vision_model.*`) as a Janus-Pro
    Hugging Face folder: config.json, model.safetensors (or `shards` files with
    model.safetensors.index.json), tokenizer.json (a copy), tokenizer_config.json,
    special_tokens_map.json, processor_config.json, preprocessor_config.json. Float tensors are
    stored in `dtype` (default f32, lossless for a model trained here; the released checkpoints
    are bf16: `reference.py make-janus` writes bf16 by default). `understanding` adds a random
    `language_model.lm_head.weight` and a small `aligner.*`, tensors a converter must skip."""
    cfg = model.cfg
    os.makedirs(folder, exist_ok=True)
    tensors = {k: v.detach().to(dtype) for k, v in model.state_dict().items()}
    if vq is not None:
        for k, v in vq.state_dict().items():
            tensors[VQ_PREFIX + k] = v.detach().to(dtype)
        tensors[VQ_PREFIX + "quantize.codebook_used"] = torch.zeros(65536, dtype=dtype)  # the released buffer
    if understanding:
        g = torch.Generator().manual_seed(1)
        tensors["language_model.lm_head.weight"] = (0.02 * torch.randn(cfg.text_vocab, cfg.dim, generator=g)).to(dtype)
        tensors["aligner.layers.0.weight"] = (0.02 * torch.randn(cfg.dim, 16, generator=g)).to(dtype)
        tensors["aligner.layers.0.bias"] = torch.zeros(cfg.dim, dtype=dtype)
    names = list(tensors)
    shards = max(1, min(shards, len(names)))
    if shards == 1:
        save_file(tensors, os.path.join(folder, "model.safetensors"), {"format": "pt"})
    else:
        weight_map, total = {}, 0
        per = -(-len(names) // shards)
        for s in range(shards):
            part = names[s * per:(s + 1) * per]
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            save_file({k: tensors[k] for k in part}, os.path.join(folder, fname), {"format": "pt"})
            for k in part:
                weight_map[k] = fname
                total += tensors[k].numel() * tensors[k].element_size()
        write_json(folder, "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})
    ds = vq.cfg.downsample if vq is not None else 16
    write_json(folder, "config.json", cfg.released_config(_DTYPE_NAMES[dtype], cfg.grid * ds))
    with open(tokenizer_json_path, encoding="utf-8") as f:
        tj = json.load(f)
    write_json(folder, "tokenizer.json", tj)
    added = [a["content"] for a in tj.get("added_tokens", [])]
    extra = [t for t in (IMAGE_TAG, IMAGE_START_TAG, IMAGE_END_TAG, USER_ROLE, ASSISTANT_ROLE) if t in added]
    write_json(folder, "special_tokens_map.json", {"additional_special_tokens": extra, "bos_token": BOS_TOKEN,
                                                   "eos_token": EOS_TOKEN, "pad_token": PAD_TOKEN})
    write_json(folder, "tokenizer_config.json", {
        "add_bos_token": True, "add_eos_token": False, "bos_token": BOS_TOKEN, "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN, "clean_up_tokenization_spaces": False, "legacy": True,
        "model_max_length": cfg.max_position_embeddings, "tokenizer_class": "LlamaTokenizerFast",
        "unk_token": None, "use_default_system_prompt": False})
    write_json(folder, "processor_config.json", {
        "add_special_token": False, "ignore_id": -100, "image_tag": IMAGE_TAG, "mask_prompt": True,
        "num_image_tokens": cfg.num_image_tokens, "processor_class": "VLChatProcessor", "sft_format": "deepseek"})
    write_json(folder, "preprocessor_config.json", {
        "background_color": [127, 127, 127], "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
        "image_processor_type": "VLMImageProcessor", "image_size": cfg.grid * ds,
        "image_std": [0.5, 0.5, 0.5], "min_size": 14, "processor_class": "VLChatProcessor",
        "rescale_factor": 1.0 / 255.0})


def write_json(folder, name, obj):
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ----------------------------------------------------------------------------------------------
# A small byte-level BPE tokenizer in Hugging Face's tokenizer.json format
# ----------------------------------------------------------------------------------------------
def byte_to_unicode():
    """GPT-2's byte -> printable character map (what the ByteLevel pre-tokenizer emits):
    printable Latin-1 bytes map to themselves, the rest to 256 + n in byte order."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(ord("¡"), ord("¬") + 1)) | set(range(ord("®"), ord("ÿ") + 1))
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


def learn_merges(texts, n_merges):
    """Plain BPE on byte-level words (split before spaces, the space kept at a word's start)."""
    b2u = byte_to_unicode()
    counts: Dict[tuple, int] = {}
    for t in texts:
        for w in t.replace(" ", "\x00 ").split("\x00"):
            if w:
                key = tuple(b2u[b] for b in w.encode("utf-8"))
                counts[key] = counts.get(key, 0) + 1
    merges = []
    while len(merges) < n_merges:
        pairs: Dict[tuple, int] = {}
        for w, c in counts.items():
            for p in zip(w, w[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))  # most frequent, ties by the pair itself
        merges.append(best)
        new = {}
        for w, c in counts.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        counts = new
    return merges


def build_byte_bpe(texts, vocab_size, specials=SPECIAL_TOKENS):
    """tokenizer.json (a dict) of a byte-level BPE with at most vocab_size ids: the 256 byte
    tokens (id = byte value), merges learned on `texts`, then the special tokens as added tokens
    at the top ids (as DeepSeek's at 100000+). Pre-tokenizer ByteLevel without the split regex
    (use_regex false), TemplateProcessing adding BOS, ByteLevel decoder."""
    n_merges = vocab_size - 256 - len(specials)
    if n_merges < 0:
        raise ValueError(f"text vocab {vocab_size} < 256 byte tokens + {len(specials)} special tokens")
    b2u = byte_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    merges = []
    for a, b in learn_merges(texts, n_merges):
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
            merges.append(f"{a} {b}")
    first = vocab_size - len(specials)
    # The special tokens are in the model's vocab too, as in DeepSeek's file: Hugging Face gives an
    # added token the id the vocab has for it, else the next free id after the vocab, whatever
    # its "id" field says (the merges may stop short of first).
    for i, s in enumerate(specials):
        vocab[s] = first + i
    added = [{"id": first + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(specials)]
    bos = specials[0]
    bos_id = first
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": merges},
    }


class ByteBPE:
    """Encoder / decoder for tokenizer.json files of build_byte_bpe's kind (ByteLevel without
    the split regex, BPE, optional BOS template): added tokens are split out first (longest
    match), the text between them is one byte-level word merged by rank. Not a general
    Hugging Face tokenizer: DeepSeek's real one splits with regexes first (the engine's job)."""

    def __init__(self, tj: dict):
        pre = tj.get("pre_tokenizer") or {}
        if tj.get("model", {}).get("type") != "BPE" or pre.get("type") != "ByteLevel" or pre.get("use_regex", True) \
                or pre.get("add_prefix_space") or tj.get("normalizer"):
            raise ValueError("ByteBPE reads only byte-level BPE tokenizers without a split regex or normalizer")
        m = tj["model"]
        self.vocab = dict(m["vocab"])
        self.added = {a["content"]: a["id"] for a in tj.get("added_tokens", [])}
        self.vocab.update(self.added)
        self.inv = {i: t for t, i in self.vocab.items()}
        self.ranks = {tuple(mg.split(" ") if isinstance(mg, str) else mg): r for r, mg in enumerate(m["merges"])}
        self.b2u = byte_to_unicode()
        self.u2b = {c: b for b, c in self.b2u.items()}
        pp = tj.get("post_processor") or {}
        self.prefix = [self.vocab[p["SpecialToken"]["id"]] for p in pp.get("single", [])
                       if "SpecialToken" in p][:1] if pp.get("type") == "TemplateProcessing" else []

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def _bpe(self, word):
        parts = list(word)
        while len(parts) > 1:
            ranked = [(self.ranks.get((a, b), 1 << 60), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            r, i = min(ranked)
            if r == 1 << 60:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [self.vocab[p] for p in parts]

    def encode(self, text, add_special_tokens=True) -> List[int]:
        ids = list(self.prefix) if add_special_tokens else []
        specials = sorted(self.added, key=len, reverse=True)
        i, start = 0, 0
        while i <= len(text):
            hit = next((s for s in specials if text.startswith(s, i)), None) if i < len(text) else None
            if hit is None and i < len(text):
                i += 1
                continue
            if i > start:
                ids += self._bpe("".join(self.b2u[b] for b in text[start:i].encode("utf-8")))
            if hit is None:
                break
            ids.append(self.added[hit])
            i += len(hit)
            start = i
        return ids

    def decode(self, ids, skip_special_tokens=False) -> str:
        out, buf = [], bytearray()
        for i in ids:
            t = self.inv[int(i)]
            if t in self.added:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
                if not skip_special_tokens:
                    out.append(t)
            else:
                buf += bytes(self.u2b[c] for c in t)
        out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)

    def token_id(self, token):
        return self.vocab[token]


TINY_TOKENIZER_TEXTS = [  # what the tiny tokenizers learn their merges from (Fashion-MNIST's classes)
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    "a photo of a T-shirt", "a photo of a trouser", "a photo of a pullover", "a photo of a dress",
    "a photo of a coat", "a photo of a sandal", "a photo of a shirt", "a photo of a sneaker",
    "a photo of a bag", "an ankle boot", ": \n\n", "the image of a small grayscale piece of clothing"]
