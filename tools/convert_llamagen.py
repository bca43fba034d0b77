#!/usr/bin/env python3
"""Convert a LlamaGen checkpoint (.pt) to the safetensors layout vkspec loads.

  /usr/bin/python3 tools/convert_llamagen.py c2i_B_256.pt gpt_b.safetensors --kind gpt
  /usr/bin/python3 tools/convert_llamagen.py t2i_XL_stage1_256.pt t2i_xl.safetensors --kind gpt \
      --text-encoder flan_t5_xl.safetensors   (tools/convert_t5.py's output, beside it)
  /usr/bin/python3 tools/convert_llamagen.py vq_ds16_c2i.pt vq16.safetensors --kind vq
  /usr/bin/python3 tools/convert_llamagen.py last_version.pt flashar.safetensors --kind flashar \
      (a LlamaGen-FlashAR checkpoint, train_c2i_flashar.py's or train_t2i_flashar.py's)

GPT checkpoints keep their weights under "model" (DDP training) or are a raw state dict (FSDP
consolidation); both are accepted, as is "ema" when --ema is given. RoPE tables (`freqs_cis`),
causal masks and KV caches that some versions store are dropped: the engine recomputes them.
Hyperparameters are inferred from tensor shapes and written to `__metadata__` with the keys in
tools/README.md; only what shapes cannot tell (grid size, head count, a t2i model's condition
positions) comes from options. A t2i checkpoint (cls_embedding.cap_proj.*, uncond_embedding) is
recognised by its keys; --text-encoder names the T5 encoder file beside it (metadata
text_encoder), so `vkspec generate --prompt` encodes prompts on the engine.

--kind flashar takes LlamaGen-FlashAR's Transformer (lxazjk/LlamaGen-FlashAR, autoregressive/
models/gpt.py) and writes the one FlashAR file `vkspec --flashar` loads (tools/flashar_model.py):
its vertical blocks, kept as layers n_layer .. n_layer + V - 1 of the same list, become
vertical.layers.*, medusa_norm / medusa_output vertical.norm / vertical.output, the --hv-gate MLP
(hv_gate_mlp.0 / .2) gate.fc1 / gate.fc2 with flashar.gate_norm = joint (its `_hv_gate`
normalises [H; V] as one vector), and without that gate its --hv-mix logit (hv_mix_logit), or 0
for the plain 0.5 mix of its t2i script, gate.mix_logit with flashar.gate = constant. V and the
branch's start layer come from the checkpoint's saved args (medusa_attention_num,
vertical_start_layer, vertical_start_last_minus_depth) where it has them (the c2i script saves
them; the t2i script's last_version.pt does not), else --vertical-layers / --vertical-start-layer,
else the code's defaults: V = 1, start -1 = after the last backbone block.
"""
import argparse
import re
import sys

import torch

from safetensors_io import save_file
from vkspec_models import find_multiple

DROP = re.compile(r"(^|\.)(freqs_cis|causal_mask|kv_cache\..*|k_cache|v_cache)$")


def state_dict_of(ckpt, use_ema):
    if not isinstance(ckpt, dict):
        raise ValueError("checkpoint is not a dict of tensors")
    for key in (["ema"] if use_ema else []) + ["model", "state_dict"]:
        if key in ckpt and isinstance(ckpt[key], dict):
            return ckpt[key]
    if use_ema:
        raise ValueError("--ema given but the checkpoint has no 'ema' entry")
    if all(isinstance(v, torch.Tensor) for v in ckpt.values()):
        return ckpt
    raise ValueError("no 'model' entry and not a raw state dict: keys " + ", ".join(list(ckpt)[:8]))


def clean(sd):
    out = {}
    for k, v in sd.items():
        k = k[7:] if k.startswith("module.") else k  # DDP wrapper prefix
        k = k.replace("_orig_mod.", "")              # torch.compile wrapper prefix
        if DROP.search(k) or not isinstance(v, torch.Tensor):
            continue
        out[k] = v
    return out


def require(sd, name):
    if name not in sd:
        raise ValueError(f"tensor {name} missing: not a LlamaGen checkpoint of this kind?")
    return sd[name]


def gpt_metadata(sd, n_head, grid, cls_token_num=120):
    vocab, dim = require(sd, "tok_embeddings.weight").shape
    n_layer = 1 + max(int(m.group(1)) for k in sd if (m := re.match(r"layers\.(\d+)\.", k)))
    n_head = n_head or dim // 64
    if dim % n_head:
        raise ValueError(f"dim {dim} is not divisible by n_head {n_head}")
    head_dim = dim // n_head
    hidden = require(sd, "layers.0.feed_forward.w1.weight").shape[0]
    if hidden != find_multiple(int(2 * 4 * dim / 3), 256):
        print(f"note: FFN hidden {hidden} differs from LlamaGen's default rule; stored in metadata",
              file=sys.stderr)
    # LlamaGen's wqkv is [(n_head + 2 n_kv_head) head_dim, dim]: grouped-query checkpoints say so.
    rows, cols = require(sd, "layers.0.attention.wqkv.weight").shape
    kv_rows = rows - dim
    if cols != dim or kv_rows <= 0 or kv_rows % (2 * head_dim):
        raise ValueError(f"layers.0.attention.wqkv.weight has shape {[rows, cols]}, expected "
                         f"[(n_head + 2 n_kv_head) * {head_dim}, {dim}]")
    n_kv_head = kv_rows // (2 * head_dim)
    meta = {"vkspec.kind": "gpt", "vkspec.source": "llamagen", "dim": dim, "n_layer": n_layer,
            "n_head": n_head, "n_kv_head": n_kv_head, "head_dim": head_dim,
            "vocab_size": vocab, "grid_size": grid, "block_size": grid * grid,
            "rope_base": 10000.0, "norm_eps": 1e-5, "multiple_of": 256,
            "ffn_hidden": hidden, "cfg": 4.0, "temperature": 1.0, "top_k": 2000, "top_p": 1.0}
    if "cls_embedding.cap_proj.fc1.weight" in sd:
        caption_dim = sd["cls_embedding.cap_proj.fc1.weight"].shape[1]
        uncond = require(sd, "cls_embedding.uncond_embedding").shape
        if uncond[0] < cls_token_num or uncond[1] != caption_dim:
            raise ValueError(f"cls_embedding.uncond_embedding has shape {list(uncond)}, expected "
                             f"[>= {cls_token_num}, {caption_dim}] (cls_token_num, caption_dim)")
        meta.update({"model_type": "t2i", "caption_dim": caption_dim, "cls_token_num": cls_token_num,
                     "cfg": 7.5, "top_k": 1000})  # LlamaGen's sample_t2i.py defaults
    else:
        n_cls = require(sd, "cls_embedding.embedding_table.weight").shape[0] - 1
        meta.update({"model_type": "c2i", "num_classes": n_cls, "cls_token_num": 1})
    return meta


def saved_arg(ckpt, name):
    """An argparse value the LlamaGen-FlashAR scripts save beside the weights ("args"), or None."""
    args = ckpt.get("args") if isinstance(ckpt, dict) else None
    if args is None:
        return None
    return args.get(name) if isinstance(args, dict) else getattr(args, name, None)


def flashar_layout(sd, ckpt, vertical_layers=0, vertical_start=None):
    """LlamaGen-FlashAR's keys -> (our FlashAR file's tensors, its flashar.* metadata); see the
    module doc. The backbone's own keys stay as they are."""
    require(sd, "medusa_norm.weight")
    require(sd, "medusa_output.weight")
    total = 1 + max(int(m.group(1)) for k in sd if (m := re.match(r"layers\.(\d+)\.", k)))
    V = vertical_layers or saved_arg(ckpt, "medusa_attention_num") or 1
    n_layer = total - V
    if n_layer < 1:
        raise ValueError(f"{total} blocks cannot hold {V} vertical block(s) and a backbone")
    if vertical_start is None:
        saved = saved_arg(ckpt, "vertical_start_layer")
        vertical_start = -1 if saved is None else int(saved)
        if saved_arg(ckpt, "vertical_start_last_minus_depth"):
            vertical_start = n_layer - V
    start = n_layer if vertical_start < 0 else min(vertical_start, n_layer)  # gpt.py's rule
    out = {}
    for k, v in sd.items():
        m = re.match(r"layers\.(\d+)\.(.*)", k)
        if m and int(m.group(1)) >= n_layer:
            out[f"vertical.layers.{int(m.group(1)) - n_layer}.{m.group(2)}"] = v
        elif k.startswith("medusa_"):
            out["vertical." + k[len("medusa_"):]] = v
        elif k.startswith("hv_gate_mlp.") or k == "hv_mix_logit":
            continue
        else:
            out[k] = v
    meta = {"role": "flashar", "flashar.vertical_layers": V, "flashar.vertical_start_layer": start}
    if "hv_gate_mlp.0.weight" in sd:
        fc1 = sd["hv_gate_mlp.0.weight"]
        out.update({"gate.fc1.weight": fc1, "gate.fc2.weight": require(sd, "hv_gate_mlp.2.weight"),
                    "gate.fc2.bias": require(sd, "hv_gate_mlp.2.bias")})
        meta.update({"flashar.gate": "mlp", "flashar.gate_hidden": fc1.shape[0], "flashar.gate_norm": "joint"})
    else:
        mix = sd.get("hv_mix_logit", torch.zeros(()))
        out["gate.mix_logit"] = mix.reshape(1).float()
        meta["flashar.gate"] = "constant"
    return out, meta


def vq_metadata(sd):
    ch, cin = require(sd, "encoder.conv_in.weight").shape[:2]
    levels = 1 + max(int(m.group(1)) for k in sd
                     if (m := re.match(r"encoder\.conv_blocks\.(\d+)\.", k)))
    nres = 1 + max(int(m.group(1)) for k in sd
                   if (m := re.match(r"encoder\.conv_blocks\.0\.res\.(\d+)\.", k)))
    mult = [sd[f"encoder.conv_blocks.{i}.res.0.conv1.weight"].shape[0] // ch for i in range(levels)]
    n_e, e_dim = require(sd, "quantize.embedding.weight").shape
    z = require(sd, "encoder.conv_out.weight").shape[0]
    cout = require(sd, "decoder.conv_out.weight").shape[0]
    return {"vkspec.kind": "vq", "vkspec.source": "llamagen", "ch": ch,
            "ch_mult": ",".join(map(str, mult)), "z_channels": z, "codebook_size": n_e,
            "codebook_embed_dim": e_dim, "num_res_blocks": nres, "in_channels": cin,
            "out_channels": cout, "codebook_l2_norm": 1, "norm_groups": 32, "norm_eps": 1e-6,
            "downsample": 2 ** (levels - 1)}


def convert(src, dst, kind, dtype, n_head=0, grid=16, use_ema=False, cls_token_num=120, text_encoder=None,
            vertical_layers=0, vertical_start=None):
    ckpt = torch.load(src, map_location="cpu")
    sd = clean(state_dict_of(ckpt, use_ema))
    flashar = {}
    if kind == "flashar":
        sd, flashar = flashar_layout(sd, ckpt, vertical_layers, vertical_start)
    if kind in ("gpt", "flashar"):
        meta = gpt_metadata({k: v for k, v in sd.items() if not k.startswith(("vertical.", "gate."))}, n_head, grid,
                            cls_token_num)
        meta.update(flashar)
        if text_encoder:
            if meta["model_type"] != "t2i":
                raise ValueError("--text-encoder: the checkpoint is class-conditional")
            if "/" in text_encoder:
                raise ValueError(f"--text-encoder {text_encoder}: a file name beside the model (no folder)")
            meta["text_encoder"] = text_encoder
    else:
        sd.pop("quantize.codebook_used", None)  # training statistics, not weights
        sd = {k: v for k, v in sd.items() if k.split(".")[0] in
              ("encoder", "decoder", "quantize", "quant_conv", "post_quant_conv")}
        meta = vq_metadata(sd)
    target = torch.float16 if dtype == "f16" else torch.float32
    out = {}
    for k, v in sd.items():
        keep_f32 = v.dim() <= 1 or k.startswith(("quantize.", "gate."))  # norms, biases, codebook, gate
        out[k] = v.float() if keep_f32 or not v.is_floating_point() else v.to(target)
    save_file(out, dst, {k: str(v) for k, v in meta.items()})
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--kind", choices=["gpt", "vq", "flashar"], required=True)
    ap.add_argument("--dtype", choices=["f16", "f32"], default="f16")
    ap.add_argument("--n-head", type=int, default=0, help="default: dim / 64 (LlamaGen)")
    ap.add_argument("--grid", type=int, default=16, help="token grid side: 16 for 256px, 24 for 384px")
    ap.add_argument("--ema", action="store_true", help="take the 'ema' weights")
    ap.add_argument("--cls-token-num", type=int, default=120,
                    help="t2i only: caption positions (LlamaGen: 120, its T5 max length)")
    ap.add_argument("--text-encoder", metavar="FILE",
                    help="t2i only: the converted T5 encoder's file name, beside the model (metadata text_encoder)")
    ap.add_argument("--vertical-layers", type=int, default=0,
                    help="flashar: the vertical blocks (default: the checkpoint's medusa_attention_num, else 1)")
    ap.add_argument("--vertical-start-layer", type=int, default=None,
                    help="flashar: the backbone block the branch reads the input of (-1: after the last; "
                         "default: the checkpoint's saved args, else -1)")
    a = ap.parse_args()
    try:
        meta = convert(a.src, a.dst, a.kind, a.dtype, a.n_head, a.grid, a.ema, a.cls_token_num, a.text_encoder,
                       a.vertical_layers, a.vertical_start_layer)
    except (ValueError, KeyError, RuntimeError, OSError) as e:
        print(f"convert_llamagen: {a.src}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.dst}: " + ", ".join(f"{k}={v}" for k, v in meta.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
