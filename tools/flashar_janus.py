"""FlashAR on Janus-Pro (our variant; issue #48): tools/flashar_model.py's `FlashAR` with a
`janus_model.JanusGen` backbone, as the engine's `--method flashar` runs it on the `janus-pro`
family.

The paper and its released code (lxazjk/LlamaGen-FlashAR) post-train LlamaGen only; no recipe
exists for Janus-Pro. What carries over unchanged: the diagonal attention mask, the fusion rules
(corner gated at the last condition position, row 0 H, column 0 V, interior gated), the
`--hv-gate` logit gate, the loss and the two stages. What is Janus's own:
  * the condition is Janus-Pro's generation prompt, left-padded to P positions (padding hidden
    from every query but itself, as janus_model.forward_train); the corner is predicted at the
    last prompt position, `<begin_of_image>`; the CFG row is Janus's unconditional prompt (every
    prompt token but the first and the last replaced by the pad id), not a null class;
  * RoPE is 1D over sequence positions (image cell n at P + n), not LlamaGen's 2D grid RoPE;
  * the horizontal head H is the backbone's `gen_head` (Linear, GELU, Linear) after its final
    norm; the vertical head V is a copy of that MLP (`vertical.gen_head.*`) after the branch's
    own norm, where LlamaGen's V is one matrix.

File: a converted Janus-Pro file (tools/convert_janus.py's names and metadata, the fine-tuned
backbone) plus `vertical.layers.{i}.*` (a converted layer's names), `vertical.norm.weight`,
`vertical.gen_head.{output_mlp_projector,vision_head}.{weight,bias}` and the gate as
flashar_model's files; metadata role flashar and the flashar.* keys.
"""
import torch
import torch.nn as nn

import convert_janus as cj
import janus_model as jm
from flashar_model import FlashAR, FlashArShape, flashar_keys
from safetensors_io import load_file, save_file
from vkspec_models import RMSNorm


class JanusVerticalBranch(nn.Module):
    def __init__(self, jcfg: jm.JanusConfig, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([jm.LlamaDecoderLayer(jcfg) for _ in range(n_layers)])
        self.norm = RMSNorm(jcfg.dim, jcfg.norm_eps)
        self.gen_head = jm.VisionHead(jcfg.dim, jcfg.head_hidden, jcfg.image_vocab)


class JanusFlashAR(FlashAR):
    """FlashAR on a JanusGen backbone. labels are prompt ids [B, P], left-padded with pad_id
    (emb_mask [B, P], 0 on the padding)."""

    def __init__(self, base: jm.JanusGen, vertical_layers=1, vertical_start=None, gate_hidden=None, gate="mlp",
                 gate_norm="joint", prompt_tokens=None, pad_id=None):
        jc = base.cfg
        shape = FlashArShape(jc.grid, prompt_tokens, jc.image_vocab, jc.n_layer, jc.dim, "janus-pro", pad_id)
        super().__init__(base, vertical_layers, vertical_start, gate_hidden, gate, gate_norm, shape=shape)

    def make_vertical(self, n_layers):
        return JanusVerticalBranch(self.base.cfg, n_layers)

    def layers(self):
        return self.base.trunk.layers

    def copy_head_into_vertical(self):
        self.vertical.norm.load_state_dict(self.base.trunk.norm.state_dict())
        self.vertical.gen_head.load_state_dict(self.base.gen_head.state_dict())

    def rope(self, pos):
        return jm.rope_cos_sin(pos, self.base.cfg.head_dim, self.base.cfg.rope_theta)

    def h_head(self, x):
        return self.base.gen_head(self.base.trunk.norm(x)).float()

    def v_head(self, v):
        return self.vertical.gen_head(self.vertical.norm(v)).float()

    def embed(self, tokens, labels):
        parts = [self.base.embed_text(labels)]
        if tokens is not None and tokens.shape[1] > 0:
            parts.append(self.base.embed_image(tokens))
        return torch.cat(parts, dim=1)

    def null_condition(self, labels):
        """Janus's unconditional rows of left-padded prompt ids: between each row's first prompt
        token (BOS, the first that is not padding) and its last (`<begin_of_image>`), pad ids."""
        pad = self.cfg.pad_id
        idx = torch.arange(labels.shape[1], device=labels.device)
        first = torch.where(labels != pad, idx, labels.shape[1]).min(dim=1, keepdim=True).values
        inner = (idx > first) & (idx < labels.shape[1] - 1)
        return torch.where(inner, torch.full_like(labels, pad), labels)


# ----------------------------------------------------------------------------------------------
# file
# ----------------------------------------------------------------------------------------------
def vertical_plan(model: JanusFlashAR):
    jc = model.base.cfg
    entries = {}
    for i in range(model.n_vertical):
        entries.update(cj.layer_plan(jc, f"layers.{i}.", f"vertical.layers.{i}."))
    entries["vertical.norm.weight"] = (["norm.weight"], [jc.dim], "f32")
    entries.update(cj.head_plan(jc, "gen_head.", "vertical.gen_head."))
    return entries


def save_janus_flashar(model: JanusFlashAR, path, base_meta, extra=None, dtype="f16"):
    """The engine's file: base_meta (the converted Janus-Pro file's metadata: tokenizer, prompt
    template, special ids, ...) with the FlashAR keys, the backbone converted as convert_janus
    does, the branch under vertical.*, the gate in f32."""
    jc = model.base.cfg
    tensors = cj.to_engine(model.base.state_dict(), cj.plan(jc), jc.n_head, dtype)
    tensors.update(cj.to_engine(model.vertical.state_dict(), vertical_plan(model), jc.n_head, dtype))
    for k, t in model.gate.state_dict().items():
        tensors["gate." + k] = t.detach().float().contiguous()
    meta = {k: str(v) for k, v in base_meta.items() if not k.startswith("flashar.") and k != "role"}
    meta.update(flashar_metadata_janus(model, extra))
    save_file(tensors, path, meta)
    return meta


def flashar_metadata_janus(model: JanusFlashAR, extra=None):
    m = {k: str(v) for k, v in (extra or {}).items()}
    m.update(flashar_keys(model))
    m["cls_token_num"] = str(model.cfg.cls_token_num)
    return m


def load_janus_flashar(path):
    """-> (JanusFlashAR in f32, eval mode, metadata) of a file save_janus_flashar wrote."""
    sd, meta = load_file(path)
    base, _ = cj.load_converted(path)
    gate = meta.get("flashar.gate", "mlp")
    m = JanusFlashAR(base, int(meta["flashar.vertical_layers"]), int(meta["flashar.vertical_start_layer"]),
                     int(meta["flashar.gate_hidden"]) if gate == "mlp" else None, gate,
                     meta.get("flashar.gate_norm", "joint"), prompt_tokens=int(meta["cls_token_num"]),
                     pad_id=int(meta["pad_id"]))
    m.vertical.load_state_dict(cj.from_engine(sd, vertical_plan(m), base.cfg.n_head), strict=True)
    m.gate.load_state_dict({k[len("gate."):]: v.float() for k, v in sd.items() if k.startswith("gate.")})
    return m.eval(), meta
