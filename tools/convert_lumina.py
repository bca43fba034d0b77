#!/usr/bin/env python3
"""Convert Lumina-mGPT's released files to the files vkspec loads (issue 49; docs/lumina.md).

  /usr/bin/python3 tools/convert_lumina.py --vqgan ckpts/chameleon/tokenizer models/chameleon_vqgan

reads Chameleon's VQGAN as Meta's download and Lumina-mGPT's `ckpts/chameleon/tokenizer/` hold it
(`vqgan.yaml`, `vqgan.ckpt`) and writes OUT.safetensors in the engine's VQ layout (the layout
`convert_llamagen.py --kind vq` writes: `encoder.conv_blocks.{i}.res.{j}`, `decoder.conv_blocks.{k}`
walking the decoder from its deepest level, `mid.{0,1,2}`), with metadata `codebook_l2_norm 0`
(Chameleon's codes are looked up raw) and `level_attention 0` (attention in the middle blocks
only, the released `attn_resolutions: []`). Training-only tensors (`loss.*`) are skipped. The
transformer's conversion comes with the engine's lumina-mgpt family.
"""
import argparse
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chameleon_vqgan as cv  # noqa: E402
from safetensors_io import save_file  # noqa: E402

MID = {"block_1": "0", "attn_1": "1", "block_2": "2"}


def engine_name(key, levels):
    """A taming VQGAN tensor name -> the engine's (None: not part of the model)."""
    m = re.match(r"(encoder|decoder)\.mid\.(block_1|attn_1|block_2)\.(.*)", key)
    if m:
        return f"{m.group(1)}.mid.{MID[m.group(2)]}.{m.group(3)}"
    m = re.match(r"encoder\.down\.(\d+)\.(block|downsample)\.(.*)", key)
    if m:
        part = "res." + m.group(3) if m.group(2) == "block" else "downsample." + m.group(3)
        return f"encoder.conv_blocks.{m.group(1)}.{part}"
    m = re.match(r"decoder\.up\.(\d+)\.(block|upsample)\.(.*)", key)
    if m:
        part = "res." + m.group(3) if m.group(2) == "block" else "upsample." + m.group(3)
        return f"decoder.conv_blocks.{levels - 1 - int(m.group(1))}.{part}"
    if re.match(r"(encoder|decoder)\.(conv_in|conv_out|norm_out)\.|quantize\.embedding\.weight$|"
                r"(post_)?quant_conv\.", key):
        return key
    return None


def vq_metadata(params):
    d = params["ddconfig"]
    if d.get("attn_resolutions"):
        raise ValueError(f"attn_resolutions {d['attn_resolutions']}: the engine runs Chameleon's VQGAN with "
                         "attention in the middle blocks only, as released")
    if d.get("double_z"):
        raise ValueError("double_z: not a VQGAN decoder the engine runs")
    return {"vkspec.kind": "vq", "vkspec.source": "chameleon", "ch": d["ch"],
            "ch_mult": ",".join(map(str, d["ch_mult"])), "z_channels": d["z_channels"],
            "codebook_size": params["n_embed"], "codebook_embed_dim": params["embed_dim"],
            "num_res_blocks": d["num_res_blocks"], "in_channels": d["in_channels"],
            "out_channels": d["out_ch"], "codebook_l2_norm": 0, "level_attention": 0, "norm_groups": 32,
            "norm_eps": 1e-6, "downsample": 2 ** (len(d["ch_mult"]) - 1)}


def convert_vqgan(folder, out_prefix, dtype="f32"):
    """Returns the metadata written. Raises ValueError naming what is wrong with the folder."""
    model = cv.load_released(folder)
    meta = vq_metadata(model.params)
    levels = len(model.params["ddconfig"]["ch_mult"])
    out = {}
    for k, v in model.state_dict().items():
        name = engine_name(k, levels)
        if name is None:
            raise ValueError(f"{folder}/vqgan.ckpt: tensor {k} has no place in the engine's VQ")
        conv = v.dim() == 4 or k == "quantize.embedding.weight"
        out[name] = v.to(torch.float16 if dtype == "f16" and conv else torch.float32).contiguous()
    save_file(out, out_prefix + ".safetensors", {k: str(v) for k, v in meta.items()})
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vqgan", metavar="FOLDER", required=True, help="a folder with vqgan.yaml and vqgan.ckpt")
    ap.add_argument("out_prefix", help="writes OUT_PREFIX.safetensors")
    ap.add_argument("--dtype", choices=["f32", "f16"], default="f32",
                    help="convolution weights and the codebook (norms and biases stay f32)")
    a = ap.parse_args()
    try:
        meta = convert_vqgan(a.vqgan, a.out_prefix, a.dtype)
    except (ValueError, KeyError, RuntimeError, OSError) as e:
        print(f"convert_lumina: {a.vqgan}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out_prefix}.safetensors: " + ", ".join(f"{k}={v}" for k, v in meta.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
