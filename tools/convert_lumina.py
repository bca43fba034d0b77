#!/usr/bin/env python3
"""Convert Lumina-mGPT's released files to the files vkspec loads (issue 49; docs/lumina.md).

  /usr/bin/python3 tools/convert_lumina.py --vqgan lumina_mgpt/ckpts/chameleon/tokenizer models/chameleon_vqgan
  /usr/bin/python3 tools/convert_lumina.py Lumina-mGPT-7B-768 models/lumina_7b_768 --size 768 \
      --vq chameleon_vqgan.safetensors

The model: from the folder `huggingface-cli download Alpha-VLLM/Lumina-mGPT-7B-768` leaves
(config.json, safetensors shards and their index; tokenizer.json, which the 512 and 1024 repos do
not ship: --tokenizer names the 768 repo's) to OUT.safetensors (`vkspec.kind` gpt,
`vkspec.family` lumina-mgpt) and OUT.tokenizer.json:
  - the trunk in LlamaGen's layout (`layers.N.attention.wqkv`, `feed_forward.w1|w3|w2`, norms),
    q and k rows permuted from rotate-half pairs (i, i + hd/2) to interleaved ones (2i, 2i + 1),
    and the q/k LayerNorm's weight and bias vectors ([groups, head_dim]) permuted the same way
    (`attention.q_norm.*`, `attention.k_norm.*`): the normalisation's statistics do not depend on
    the order of a head's values, so the permuted norm then interleaved RoPE equals the released
    norm then rotate-half RoPE;
  - `text_embeddings.weight`, the whole table (the prompt's rows are read on the host);
  - `image_embeddings.weight` [codes + 1, dim]: the image tokens' rows (BPE 4 .. 4 + codes - 1)
    and, last, the line break's (8803), the placed token's input (metadata placed_id = codes);
  - `output.weight` [codes, dim]: lm_head's image-token rows, the only logits ever sampled (the
    released sampler restricts to them);
  - metadata: sizes, the layout ids, the prompt template, the sampler defaults (cfg 4, top-k
    2000, temperature 1: the README's), grid_size from --size (a 32-px multiple; 16 px a token),
    cls_token_num from --prompt-tokens (the prompt's positions, BOS to the separator, plus the
    image start and both size tokens).
Matrices keep the checkpoint's dtype unless --dtype asks; norms and biases are f32. Tensors are
streamed one at a time.

The VQGAN: `--vqgan FOLDER` reads Chameleon's VQGAN as Meta's download and Lumina-mGPT's
`ckpts/chameleon/tokenizer/` hold it (`vqgan.yaml`, `vqgan.ckpt`) and writes OUT.safetensors in
the engine's VQ layout (the layout `convert_llamagen.py --kind vq` writes:
`encoder.conv_blocks.{i}.res.{j}`, `decoder.conv_blocks.{k}` walking the decoder from its deepest
level, `mid.{0,1,2}`), with metadata `codebook_l2_norm 0` (Chameleon's codes are looked up raw)
and `level_attention 0` (attention in the middle blocks only, the released `attn_resolutions:
[]`). Training-only tensors (`loss.*`) are skipped.
"""
import argparse
import json
import os
import re
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chameleon_vqgan as cv  # noqa: E402
import lumina_model as lm  # noqa: E402
from convert_janus import StreamWriter, cast, rope_interleave_rows  # noqa: E402
from janus_model import CheckpointFolder  # noqa: E402
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


VERSION = "1"


def interleave_vector(v):
    """The q/k norm's [groups, head_dim] vectors permuted as rope_interleave_rows permutes a head's
    rows: entry 2i + r <- i + r * head_dim / 2."""
    g, hd = v.shape
    return v.reshape(g, 2, hd // 2).transpose(1, 2).reshape(g, hd)


def plan(cfg):
    """Output name -> (sources, role); roles as convert_janus.cast takes them, plus 'wqkv', 'qk_norm',
    'image_rows' and 'output_rows'."""
    out = {"text_embeddings.weight": (["model.embed_tokens.weight"], "weight"),
           "image_embeddings.weight": (["model.embed_tokens.weight"], "image_rows"),
           "output.weight": (["lm_head.weight"], "output_rows"),
           "norm.weight": (["model.norm.weight"], "f32")}
    for i in range(cfg.n_layer):
        out.update(layer_plan(f"model.layers.{i}.", f"layers.{i}."))
    return out


def layer_plan(p, q):
    """plan()'s entries of one decoder layer: the released names under p, the engine's under q."""
    out = {q + "attention_norm.weight": ([p + "input_layernorm.weight"], "f32"),
           q + "attention.wqkv.weight": ([p + f"self_attn.{x}_proj.weight" for x in "qkv"], "wqkv"),
           q + "attention.wo.weight": ([p + "self_attn.o_proj.weight"], "weight")}
    for x in "qk":
        for part in ("weight", "bias"):
            out[q + f"attention.{x}_norm.{part}"] = ([p + f"self_attn.{x}_norm.{part}"], "qk_norm")
    out[q + "ffn_norm.weight"] = ([p + "post_attention_layernorm.weight"], "f32")
    for ours, theirs in (("w1", "gate_proj"), ("w3", "up_proj"), ("w2", "down_proj")):
        out[q + f"feed_forward.{ours}.weight"] = ([p + f"mlp.{theirs}.weight"], "weight")
    return out


def uninterleave_vector(v):
    """interleave_vector undone."""
    g, hd = v.shape
    return v.reshape(g, hd // 2, 2).transpose(1, 2).reshape(g, hd)


def unconverted_layers(sd, entries, n_head):
    """Layer tensors of a converted file (plan entries name -> (sources, role)) back under the
    released names, f32: q and k rows to rotate-half pairs, the q/k norm vectors likewise."""
    from convert_janus import rope_rotate_half_rows
    out = {}
    for name, (srcs, role) in entries.items():
        t = sd[name].float()
        if role == "wqkv":
            D = t.shape[0] // 3
            q, k, v = t[:D], t[D:2 * D], t[2 * D:]
            for s, part in zip(srcs, (rope_rotate_half_rows(q, n_head), rope_rotate_half_rows(k, n_head), v)):
                out[s] = part
        elif role == "qk_norm":
            out[srcs[0]] = uninterleave_vector(t)
        else:
            out[srcs[0]] = t
    return out


def model_metadata(cfg, out_prefix, size, prompt_tokens, has_tokenizer, folder, vq=None):
    m = {"vkspec.kind": "gpt", "vkspec.family": "lumina-mgpt", "dim": cfg.dim, "n_layer": cfg.n_layer,
         "n_head": cfg.n_head, "n_kv_head": cfg.n_kv_head, "head_dim": cfg.head_dim, "ffn_hidden": cfg.ffn_hidden,
         "norm_eps": cfg.norm_eps, "rope_base": cfg.rope_theta, "qk_norm_groups": cfg.qk_norm_groups,
         "qk_norm_eps": lm.QK_NORM_EPS, "swin_norm": int(cfg.swin_norm), "vocab_size": cfg.image_codes,
         "text_vocab_size": cfg.vocab, "grid_size": size // 16, "block_size": (size // 16) ** 2,
         "cls_token_num": prompt_tokens, "placed_id": cfg.image_codes, "image_first_id": lm.IMAGE_FIRST,
         "bos_id": lm.BOS, "sep_id": lm.SEP, "image_start_id": lm.IMAGE_START, "image_end_id": lm.IMAGE_END,
         "line_break_id": lm.LINE_BREAK, "size_base_id": lm.SIZE_BASE, "size_patch": lm.PATCH,
         "prompt_template": lm.PROMPT_TEMPLATE, "cfg": "4", "temperature": "1", "top_k": "2000", "top_p": "1",
         "source": f"{os.path.basename(os.path.normpath(folder))} (convert_lumina.py {VERSION})"}
    if has_tokenizer:
        m["tokenizer"] = os.path.basename(out_prefix) + ".tokenizer.json"
    if vq:
        m["vq"] = vq
    return m


def converted(role, parts, srcs, cfg, dtype, name):
    """The output tensor from its sources (the checkpoint's tensors, in srcs order)."""
    if role == "wqkv":
        q, k, v = (cast(parts[s], "weight", dtype, s) for s in srcs)
        return torch.cat([rope_interleave_rows(q, cfg.n_head), rope_interleave_rows(k, cfg.n_head), v])
    t = parts[srcs[0]]
    if role == "qk_norm":
        return interleave_vector(t.float())
    if role == "image_rows":
        rows = torch.cat([t[lm.IMAGE_FIRST:lm.IMAGE_FIRST + cfg.image_codes], t[lm.LINE_BREAK:lm.LINE_BREAK + 1]])
        return cast(rows, "weight", dtype, name)
    if role == "output_rows":
        return cast(t[lm.IMAGE_FIRST:lm.IMAGE_FIRST + cfg.image_codes], "weight", dtype, name)
    return cast(t, role, dtype, name)


def convert_model(folder, out_prefix, dtype="keep", size=768, prompt_tokens=320, tokenizer=None, vq=None):
    """Returns the file's metadata. Raises ValueError naming what is wrong with the folder."""
    if size <= 0 or size % lm.PATCH:
        raise ValueError(f"--size {size}: must be a positive multiple of {lm.PATCH} pixels")
    cfg = lm.LuminaConfig.from_dict(lm.read_json(folder, "config.json"))
    ck = CheckpointFolder(folder)
    outs = plan(cfg)
    want = {s for srcs, _ in outs.values() for s in srcs}
    names = [k for k in ck.names() if not k.startswith("model.vqmodel.")]
    missing = sorted(want - set(names))
    unknown = sorted(set(names) - want)
    if missing or unknown:
        raise ValueError("; ".join(([f"missing tensors: {', '.join(missing[:5])}"] if missing else []) +
                                   ([f"unexpected tensors: {', '.join(unknown[:5])}"] if unknown else [])))
    tok = tokenizer or os.path.join(folder, "tokenizer.json")
    has_tok = os.path.isfile(tok)
    if tokenizer and not has_tok:
        raise ValueError(f"--tokenizer {tokenizer}: no such file")
    if vq and os.path.dirname(vq):
        raise ValueError(f"--vq {vq}: a file name beside the model (no folder)")
    meta = model_metadata(cfg, out_prefix, size, prompt_tokens, has_tok, folder, vq)
    users = {}
    for out, (srcs, _) in outs.items():
        for s in srcs:
            users.setdefault(s, []).append(out)
    # the header's size bound: every name with a generous two-dimensional shape
    w = StreamWriter(out_prefix + ".safetensors", {o: [2 ** 40, 2 ** 40] for o in outs}, meta)
    try:
        pending = {}
        for k in names:  # shard order: each .bin shard is read once
            t = ck.get(k)
            for out in users[k]:
                srcs, role = outs[out]
                pending.setdefault(out, {})[k] = t
                if len(pending[out]) == len(srcs):
                    w.write(out, converted(role, pending.pop(out), srcs, cfg, dtype, out))
        w.close()
    except BaseException:
        w.abort()
        raise
    if has_tok:
        shutil.copyfile(tok, out_prefix + ".tokenizer.json")
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", help="a Lumina-mGPT Hugging Face folder (config.json, safetensors shards)")
    ap.add_argument("out_prefix", help="writes OUT_PREFIX.safetensors (and .tokenizer.json)")
    ap.add_argument("--vqgan", metavar="FOLDER", help="convert the VQGAN in FOLDER (vqgan.yaml, vqgan.ckpt) instead")
    ap.add_argument("--dtype", choices=["keep", "f32", "f16", "bf16"], default=None,
                    help="matrices (default: the checkpoint's; the VQGAN's: f32); norms and biases are f32")
    ap.add_argument("--size", type=int, default=768, help="image side in pixels (a multiple of 32)")
    ap.add_argument("--prompt-tokens", type=int, default=320,
                    help="condition positions: the prompt (BOS to separator) plus image start and size tokens")
    ap.add_argument("--tokenizer", help="the tokenizer.json to ship beside (default: the folder's)")
    ap.add_argument("--vq", metavar="FILE", help="the converted VQGAN's file name, beside the model (metadata vq: "
                                                 "vkspec decodes with it without --vq)")
    a = ap.parse_args()
    try:
        if a.vqgan:
            dtype = a.dtype or "f32"
            if dtype not in ("f32", "f16"):
                raise ValueError(f"--dtype {dtype}: the VQGAN converts to f32 or f16")
            meta = convert_vqgan(a.vqgan, a.out_prefix, dtype)
        elif a.folder:
            meta = convert_model(a.folder, a.out_prefix, a.dtype or "keep", a.size, a.prompt_tokens, a.tokenizer,
                                 a.vq)
        else:
            ap.error("give a model folder, or --vqgan FOLDER")
    except (ValueError, KeyError, RuntimeError, OSError) as e:
        print(f"convert_lumina: {a.vqgan or a.folder}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out_prefix}.safetensors: " + ", ".join(f"{k}={v}" for k, v in meta.items()
                                                             if k != "prompt_template"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
