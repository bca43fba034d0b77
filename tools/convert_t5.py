#!/usr/bin/env python3
"""Convert a T5 v1.1 / flan-t5 checkpoint folder's ENCODER to the file vkspec loads (`vkspec.kind`
t5_encoder; the text encoder of LlamaGen's t2i models is flan-t5-xl's).

  huggingface-cli download google/flan-t5-xl --local-dir flan-t5-xl
  /usr/bin/python3 tools/convert_t5.py flan-t5-xl models/flan_t5_xl [--dtype f32|f16|bf16]

reads the folder (config.json; model.safetensors, safetensors shards with their index, or
pytorch_model*.bin; spiece.model) and writes OUT_PREFIX.safetensors and, when the folder has
spiece.model, a copy of it as OUT_PREFIX.spiece.model (metadata `tokenizer` names it). The
decoder and lm_head of a full T5ForConditionalGeneration checkpoint are skipped, as is
`encoder.embed_tokens.weight` (a tied copy of `shared.weight`; used only when `shared.weight` is
absent). Only `feed_forward_proj` "gated-gelu" is converted (T5 v1.1, flan-t5, mT5).

The layout (tools/t5_model.py is the reference forward; linear weights are [out, in], y = W x):
  token_embeddings.weight            [vocab, d_model]         shared.weight
  relative_attention_bias.weight     [num_buckets, n_head]    block 0's table (F32), every layer uses it
  layers.{i}.attention_norm.weight   [d_model]                F32
  layers.{i}.attention.wqkv.weight   [3 n_head d_kv, d_model] rows q | k | v (head h: rows h d_kv ..)
  layers.{i}.attention.wo.weight     [d_model, n_head d_kv]
  layers.{i}.ffn_norm.weight         [d_model]                F32
  layers.{i}.feed_forward.wi.weight  [2 d_ff, d_model]        rows wi_0 (through gelu_new) | wi_1
  layers.{i}.feed_forward.wo.weight  [d_model, d_ff]
  final_norm.weight                  [d_model]                F32
Matrices keep the checkpoint's dtype unless --dtype asks. T5's attention has no 1/sqrt(d_kv)
scaling; the bias table is indexed by the bidirectional bucket of key_pos - query_pos.

Memory: tensors are read one at a time (safetensors by seeking, a .bin shard whole) and streamed
into the output, whose header is written last, so flan-t5-xxl converts without fitting in memory.
"""
import argparse
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5_model as t5  # noqa: E402
from convert_janus import TARGET, StreamWriter, cast  # noqa: E402
from janus_model import CheckpointFolder  # noqa: E402

VERSION = "1"
BIAS_TABLE = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"


def plan(cfg: t5.T5Config, embedding="shared.weight"):
    """Output tensors in order: name -> (sources, each source's shape, role). Several sources are
    concatenated by rows in the order listed. role: 'weight' (checkpoint dtype or --dtype) or
    'f32' (norms, the bias table)."""
    D, I, F = cfg.d_model, cfg.inner, cfg.d_ff
    out = {"token_embeddings.weight": ([embedding], [cfg.vocab, D], "weight"),
           "relative_attention_bias.weight": ([BIAS_TABLE], [cfg.num_buckets, cfg.n_head], "f32")}
    for i in range(cfg.n_layer):
        p, q = f"encoder.block.{i}.layer.", f"layers.{i}."
        out[q + "attention_norm.weight"] = ([p + "0.layer_norm.weight"], [D], "f32")
        out[q + "attention.wqkv.weight"] = ([p + f"0.SelfAttention.{x}.weight" for x in "qkv"], [I, D], "weight")
        out[q + "attention.wo.weight"] = ([p + "0.SelfAttention.o.weight"], [D, I], "weight")
        out[q + "ffn_norm.weight"] = ([p + "1.layer_norm.weight"], [D], "f32")
        out[q + "feed_forward.wi.weight"] = ([p + f"1.DenseReluDense.wi_{j}.weight" for j in (0, 1)], [F, D],
                                             "weight")
        out[q + "feed_forward.wo.weight"] = ([p + "1.DenseReluDense.wo.weight"], [D, F], "weight")
    out["final_norm.weight"] = (["encoder.final_layer_norm.weight"], [D], "f32")
    return out


def output_shape(srcs, shape):
    return [len(srcs) * shape[0]] + shape[1:]


def metadata(cfg: t5.T5Config, folder, prefix, has_tokenizer):
    m = {"vkspec.kind": "t5_encoder", "d_model": cfg.d_model, "n_layer": cfg.n_layer, "n_head": cfg.n_head,
         "d_kv": cfg.d_kv, "d_ff": cfg.d_ff, "vocab_size": cfg.vocab, "num_buckets": cfg.num_buckets,
         "max_distance": cfg.max_distance, "norm_eps": cfg.eps, "feed_forward_proj": cfg.feed_forward_proj,
         "source": f"{os.path.basename(os.path.normpath(folder))} (convert_t5.py {VERSION})"}
    if has_tokenizer:
        m["tokenizer"] = os.path.basename(prefix) + ".spiece.model"
    return {k: str(v) for k, v in m.items()}


def check_shape(name, shape, want):
    if list(shape) != list(want):
        raise ValueError(f"tensor {name} has shape {list(shape)}, config.json says {list(want)}")


def check_folder(ck, outs):
    """Every source present, nothing unknown, and (safetensors) every shape right, before
    anything is written. Returns source name -> its output's name."""
    users = {s: o for o, (srcs, _, _) in outs.items() for s in srcs}
    missing = [s for s in users if s not in ck]
    unknown = [k for k in ck.names() if k not in users and not t5.is_ignored(k)]
    if missing:
        raise ValueError("missing tensors: " + ", ".join(missing[:8]) +
                         (f" and {len(missing) - 8} more" if len(missing) > 8 else ""))
    if unknown:
        raise ValueError("tensors this config does not have (a different model, or config.json disagrees): " +
                         ", ".join(unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""))
    for s, o in users.items():
        shape = ck.shape(s)
        if shape is not None:
            check_shape(s, shape, outs[o][1])
    return users


def stream(ck, outs, users, writer, dtype):
    """Reads the sources in the checkpoint's order (each .bin shard loaded once) and writes each
    output as soon as all its sources have come."""
    pending = {}
    for k in ck.names():
        if k not in users:
            continue
        out = users[k]
        srcs, shape, role = outs[out]
        t = ck.get(k)
        check_shape(k, t.shape, shape)
        pending.setdefault(out, {})[k] = cast(t, role, dtype, k)
        if len(pending[out]) == len(srcs):
            parts = pending.pop(out)
            writer.write(out, torch.cat([parts[s] for s in srcs]) if len(srcs) > 1 else parts[srcs[0]])


def convert(folder, prefix, dtype="keep"):
    """Returns the file's metadata. Raises ValueError with the reason on a bad folder."""
    if dtype != "keep" and dtype not in TARGET:
        raise ValueError(f"--dtype {dtype}: keep, f32, f16 or bf16")
    cfg = t5.read_config(folder)
    ck = CheckpointFolder(folder)
    outs = plan(cfg, t5.embedding_source(ck))
    users = check_folder(ck, outs)
    spiece = os.path.join(folder, "spiece.model")
    has_tok = os.path.isfile(spiece)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    meta = metadata(cfg, folder, prefix, has_tok)
    shapes = {o: output_shape(srcs, shape) for o, (srcs, shape, _) in outs.items()}
    w = StreamWriter(prefix + ".safetensors", shapes, meta)
    try:
        stream(ck, outs, users, w, dtype)
        w.close()
    except BaseException:
        w.abort()
        raise
    if has_tok:
        shutil.copyfile(spiece, prefix + ".spiece.model")
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a T5 v1.1 / flan-t5 Hugging Face folder (config.json, weights, spiece.model)")
    ap.add_argument("out_prefix", help="writes OUT_PREFIX.safetensors (and OUT_PREFIX.spiece.model)")
    ap.add_argument("--dtype", choices=["keep", "f32", "f16", "bf16"], default="keep",
                    help="matrices and embeddings (default: the checkpoint's; norms and the bias table are f32)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    try:
        meta = convert(a.folder, a.out_prefix, a.dtype)
    except (ValueError, KeyError, RuntimeError, OSError) as e:
        print(f"convert_t5: {a.folder}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out_prefix}.safetensors: " + ", ".join(f"{k}={v}" for k, v in meta.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
