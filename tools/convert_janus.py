#!/usr/bin/env python3
"""Convert a Janus-Pro checkpoint folder (Hugging Face layout) to the files vkspec loads.

  /usr/bin/python3 tools/convert_janus.py Janus-Pro-1B janus_pro_1b
  /usr/bin/python3 tools/convert_janus.py Janus-Pro-7B janus_pro_7b --dtype f16 --prompt-tokens 256

writes OUT_PREFIX.safetensors (the generation model: `vkspec.kind` gpt, `vkspec.family`
janus-pro), OUT_PREFIX.tokenizer.json (a copy of the folder's tokenizer.json) and, when the
folder has the VQ decoder (`gen_vision_model.*`), OUT_PREFIX.vq.safetensors in the layout
`convert_llamagen.py --kind vq` writes. The folder is what `huggingface-cli download
deepseek-ai/Janus-Pro-7B` leaves (config.json, pytorch_model*.bin or *.safetensors with their
index, tokenizer files), or a `reference.py make-janus` / `janus_model.save_checkpoint_folder`
one. Understanding-only tensors (`vision_model.*`, `aligner.*`, `language_model.lm_head.weight`)
are skipped.

The trunk's q and k rows are permuted per head from Hugging Face's rotate-half RoPE pairing
(i, i + head_dim/2) to interleaved pairs (2i, 2i+1), the engine's: new row h*hd + 2i = old
h*hd + i, new row h*hd + 2i + 1 = old h*hd + i + hd/2. Both q and k permute the same way, so
q.k, and with it attention, is unchanged. Matrices keep the checkpoint's dtype unless --dtype
asks; RMSNorm weights and biases are f32.

Memory: tensors are read one at a time (safetensors by seeking; a .bin shard is loaded whole,
one at a time) and streamed into the output, whose header is written last; a 7B bf16 checkpoint
(15 GB) converts in about the size of its largest shard.
"""
import argparse
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import janus_model as jm  # noqa: E402
from convert_llamagen import vq_metadata  # noqa: E402
from safetensors_io import load_file, save_file  # noqa: E402

VERSION = "1"
_ST = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
TARGET = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def rope_interleave_rows(w, n_head):
    """[n_head * hd, D] rows from rotate-half pairs (i, i + hd/2) to interleaved (2i, 2i + 1)."""
    rows, cols = w.shape
    hd = rows // n_head
    return w.reshape(n_head, 2, hd // 2, cols).transpose(1, 2).reshape(rows, cols)


def plan(cfg: jm.JanusConfig):
    """Output tensors in order: name -> (sources, expected source shape, role). role: 'weight'
    (checkpoint dtype or --dtype), 'f32' (norms, biases), 'wqkv' (q|k|v, q and k permuted)."""
    D, F, V, H, E = cfg.dim, cfg.ffn_hidden, cfg.image_vocab, cfg.head_hidden, cfg.image_embed_dim
    lm = "language_model.model."
    out = {"text_embeddings.weight": ([lm + "embed_tokens.weight"], [cfg.text_vocab, D], "weight")}
    for i in range(cfg.n_layer):
        out.update(layer_plan(cfg, f"{lm}layers.{i}.", f"layers.{i}."))
    out["norm.weight"] = ([lm + "norm.weight"], [D], "f32")
    same = {"gen_embed.weight": ([V, E], "weight"),
            "gen_aligner.layers.0.weight": ([D, E], "weight"), "gen_aligner.layers.0.bias": ([D], "f32"),
            "gen_aligner.layers.2.weight": ([D, D], "weight"), "gen_aligner.layers.2.bias": ([D], "f32")}
    out.update({k: ([k], shape, role) for k, (shape, role) in same.items()})
    out.update(head_plan(cfg, "gen_head.", "gen_head."))
    return out


def layer_plan(cfg: jm.JanusConfig, p, q):
    """plan()'s entries of one decoder layer: Hugging Face names under p, the engine's under q."""
    D, F = cfg.dim, cfg.ffn_hidden
    return {q + "attention_norm.weight": ([p + "input_layernorm.weight"], [D], "f32"),
            q + "attention.wqkv.weight": ([p + f"self_attn.{x}_proj.weight" for x in "qkv"], [D, D], "wqkv"),
            q + "attention.wo.weight": ([p + "self_attn.o_proj.weight"], [D, D], "weight"),
            q + "ffn_norm.weight": ([p + "post_attention_layernorm.weight"], [D], "f32"),
            q + "feed_forward.w1.weight": ([p + "mlp.gate_proj.weight"], [F, D], "weight"),
            q + "feed_forward.w3.weight": ([p + "mlp.up_proj.weight"], [F, D], "weight"),
            q + "feed_forward.w2.weight": ([p + "mlp.down_proj.weight"], [D, F], "weight")}


def head_plan(cfg: jm.JanusConfig, p, q):
    """plan()'s entries of gen_head (the same names; FlashAR's vertical head under another prefix)."""
    D, V, H = cfg.dim, cfg.image_vocab, cfg.head_hidden
    parts = {"output_mlp_projector.weight": ([H, D], "weight"), "output_mlp_projector.bias": ([H], "f32"),
             "vision_head.weight": ([V, H], "weight"), "vision_head.bias": ([V], "f32")}
    return {q + k: ([p + k], shape, role) for k, (shape, role) in parts.items()}


def to_engine(sd, entries, n_head, dtype):
    """The engine's tensors of a Hugging Face-named state dict `sd` under plan entries (name ->
    (sources, shape, role)), in memory: q and k rows interleaved, matrices cast to dtype (f32,
    f16 or bf16), norms and biases f32."""
    out = {}
    for name, (srcs, shape, role) in entries.items():
        parts = [cast(sd[s].detach(), role, dtype, s) for s in srcs]
        for s, t in zip(srcs, parts):
            check_shape(s, t.shape, shape)
        if role == "wqkv":
            q, k, v = parts
            out[name] = torch.cat([rope_interleave_rows(q, n_head), rope_interleave_rows(k, n_head), v]).contiguous()
        else:
            out[name] = parts[0].contiguous()
    return out


def from_engine(sd, entries, n_head):
    """to_engine undone: Hugging Face-named f32 tensors of the engine's `sd` under plan entries."""
    out = {}
    for name, (srcs, _, role) in entries.items():
        t = sd[name].float()
        if role == "wqkv":
            D = t.shape[0] // 3
            q, k, v = t[:D], t[D:2 * D], t[2 * D:]
            t = torch.cat([rope_rotate_half_rows(q, n_head), rope_rotate_half_rows(k, n_head), v])
            for j, src in enumerate(srcs):
                out[src] = t[j * D:(j + 1) * D]
        else:
            out[srcs[0]] = t
    return out


def rope_rotate_half_rows(w, n_head):
    """The inverse of rope_interleave_rows: interleaved pairs back to rotate-half ones."""
    rows, cols = w.shape
    hd = rows // n_head
    return w.reshape(n_head, hd // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def config_from_metadata(meta):
    """The JanusConfig of a file this converter wrote (its metadata)."""
    i = lambda k: int(meta[k])
    return jm.JanusConfig(dim=i("dim"), n_layer=i("n_layer"), n_head=i("n_head"), ffn_hidden=i("ffn_hidden"),
                          text_vocab=i("text_vocab_size"), image_vocab=i("vocab_size"),
                          image_embed_dim=i("image_embed_dim"), head_hidden=i("head_hidden"),
                          rope_theta=float(meta["rope_base"]), norm_eps=float(meta["norm_eps"]),
                          grid=i("grid_size"), n_kv_head=i("n_kv_head"))


def load_converted(path):
    """A file this converter wrote -> (janus_model.JanusGen in f32, eval mode, its metadata): the
    conversion undone (q and k rows back to rotate-half pairs), so tools that train on a shipped
    Janus-Pro file (train_draft_heads.py) start from exactly what the engine runs."""
    sd, meta = load_file(path)
    if meta.get("vkspec.family") != "janus-pro":
        raise ValueError(f"{path}: not a Janus-Pro file (metadata vkspec.family "
                         f"{meta.get('vkspec.family')!r})")
    cfg = config_from_metadata(meta)
    model = jm.JanusGen(cfg)
    model.load_state_dict(from_engine(sd, plan(cfg), cfg.n_head), strict=True)
    return model.eval(), meta


def cast(t, role, dtype, name):
    if not t.is_floating_point():
        raise ValueError(f"{name} has dtype {t.dtype}, expected a float tensor")
    target = torch.float32 if role == "f32" else (t.dtype if dtype == "keep" else TARGET[dtype])
    if target not in _ST:
        target = torch.float32  # f64 checkpoints: stored as f32
    out = t.to(target)
    if target == torch.float16 and bool(torch.isinf(out).any()) and not bool(torch.isinf(t).any()):
        raise ValueError(f"{name}: values beyond f16's range (max |x| {t.abs().max().item():.4g}); use --dtype bf16 or f32")
    return out


class StreamWriter:
    """A safetensors file written tensor by tensor: space for the header is reserved first (its
    size bounded from the planned names and shapes), the data appended as it comes, the header
    (padded with spaces, data 8-byte aligned) written last. Written to a temporary name and
    renamed on close, so a failed conversion leaves no truncated file."""

    def __init__(self, path, shapes, metadata):
        self.path, self.tmp = path, f"{path}.{os.getpid()}.tmp"
        self.meta = {str(k): str(v) for k, v in metadata.items()}
        bound = {"__metadata__": self.meta}
        bound.update({n: {"dtype": "BF16", "shape": s, "data_offsets": [10 ** 19, 10 ** 19]} for n, s in shapes.items()})
        n = len(json.dumps(bound, separators=(",", ":")).encode("utf-8"))
        self.reserved = n + (8 - (8 + n) % 8) % 8
        self.header, self.off = {}, 0
        self.f = open(self.tmp, "wb")
        self.f.write(b"\0" * (8 + self.reserved))

    def write(self, name, t):
        t = t.detach().contiguous()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        self.header[name] = {"dtype": _ST[t.dtype], "shape": list(t.shape), "data_offsets": [self.off, self.off + len(raw)]}
        self.f.write(raw)
        self.off += len(raw)

    def close(self):
        hj = json.dumps(dict({"__metadata__": self.meta}, **self.header), separators=(",", ":")).encode("utf-8")
        assert len(hj) <= self.reserved, "header bound"
        self.f.seek(0)
        self.f.write(len(hj + b" " * (self.reserved - len(hj))).to_bytes(8, "little"))
        self.f.write(hj + b" " * (self.reserved - len(hj)))
        self.f.close()
        os.replace(self.tmp, self.path)

    def abort(self):
        self.f.close()
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def check_shape(name, t_shape, want):
    if list(t_shape) != list(want):
        raise ValueError(f"tensor {name} has shape {list(t_shape)}, config.json says {list(want)}")


def metadata(cfg, tok, folder, prefix, prompt_tokens, has_vq):
    base = os.path.basename(prefix)
    m = {"vkspec.kind": "gpt", "vkspec.family": "janus-pro", "dim": cfg.dim, "n_layer": cfg.n_layer,
         "n_head": cfg.n_head, "n_kv_head": cfg.n_kv_head, "head_dim": cfg.head_dim, "ffn_hidden": cfg.ffn_hidden,
         "norm_eps": cfg.norm_eps, "rope_base": cfg.rope_theta, "vocab_size": cfg.image_vocab,
         "text_vocab_size": cfg.text_vocab, "grid_size": cfg.grid, "block_size": cfg.grid * cfg.grid,
         "cls_token_num": prompt_tokens, "image_embed_dim": cfg.image_embed_dim, "head_hidden": cfg.head_hidden,
         "bos_id": tok["bos_id"], "pad_id": tok["pad_id"], "image_start_id": tok["image_start_id"],
         "add_bos": int(tok["add_bos"]), "prompt_template": jm.PROMPT_TEMPLATE,
         "tokenizer": base + ".tokenizer.json", "cfg": "5", "temperature": "1", "top_k": "0", "top_p": "1",
         "source": f"{os.path.basename(os.path.normpath(folder))} (convert_janus.py {VERSION})"}
    if has_vq:
        m["vq"] = base + ".vq.safetensors"
    return m


def convert(folder, prefix, dtype="keep", prompt_tokens=256, quiet=False):
    """Returns the GPT file's metadata. Raises ValueError with the reason on a bad folder."""
    if dtype != "keep" and dtype not in TARGET:
        raise ValueError(f"--dtype {dtype}: keep, f32, f16 or bf16")
    cfg = jm.JanusConfig.from_folder(folder)
    if cfg.n_kv_head != cfg.n_head:
        raise ValueError(f"num_key_value_heads {cfg.n_kv_head} != num_attention_heads {cfg.n_head}: grouped-query "
                         "attention; the engine takes multi-head attention only")
    if prompt_tokens < 2 or prompt_tokens + cfg.grid * cfg.grid > cfg.max_position_embeddings:
        raise ValueError(f"--prompt-tokens {prompt_tokens}: at least 2, and with {cfg.grid ** 2} image tokens at most "
                         f"max_position_embeddings {cfg.max_position_embeddings}")
    tok = jm.tokenizer_ids(folder)
    ck = jm.CheckpointFolder(folder)
    outs = plan(cfg)
    users = {}
    for out, (srcs, _, _) in outs.items():
        for s in srcs:
            users[s] = out
    names = ck.names()
    missing = [s for s in users if s not in ck]
    unknown = [k for k in names if k not in users and jm.classify_key(k) not in ("understanding", "rope", "vq")]
    if missing:
        raise ValueError("missing tensors: " + ", ".join(missing))
    if unknown:
        raise ValueError("tensors this config does not have (a different model, or config.json disagrees): " +
                         ", ".join(unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""))
    for s, out in users.items():  # safetensors: every shape checked before anything is written
        shape = ck.shape(s)
        if shape is not None:
            check_shape(s, shape, outs[out][1])
    has_vq = any(k.startswith(jm.VQ_PREFIX) for k in names)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    meta = metadata(cfg, tok, folder, prefix, prompt_tokens, has_vq)
    shapes = {o: ([3 * cfg.dim, cfg.dim] if role == "wqkv" else shape) for o, (_, shape, role) in outs.items()}
    w = StreamWriter(prefix + ".safetensors", shapes, meta)
    try:
        parts, vq_sd, skipped = {}, {}, 0
        for k in names:
            if k in users:
                out = users[k]
                srcs, shape, role = outs[out]
                t = ck.get(k)
                check_shape(k, t.shape, shape)
                parts.setdefault(out, {})[k] = cast(t, role, dtype, k)
                if len(parts[out]) == len(srcs):
                    p = parts.pop(out)
                    if role == "wqkv":
                        q, kk, v = (p[s] for s in srcs)
                        t = torch.cat([rope_interleave_rows(q, cfg.n_head), rope_interleave_rows(kk, cfg.n_head), v])
                    else:
                        t = p[srcs[0]]
                    w.write(out, t)
            elif k.startswith(jm.VQ_PREFIX):
                vq_sd[k[len(jm.VQ_PREFIX):]] = ck.get(k)
            else:
                skipped += 1
        w.close()
    except BaseException:
        w.abort()
        raise
    shutil.copyfile(os.path.join(folder, "tokenizer.json"), prefix + ".tokenizer.json")
    if has_vq:
        write_vq(vq_sd, prefix + ".vq.safetensors", dtype)
    if skipped and not quiet:
        print(f"note: {skipped} tensors not used for generation skipped (understanding: vision_model, aligner, lm_head)",
              file=sys.stderr)
    return meta


def write_vq(sd, path, dtype):
    """convert_llamagen.py --kind vq's layout: its metadata rule, conv weights f16 (f32 with
    --dtype f32), biases, GroupNorm and the codebook f32; the usage counter dropped."""
    sd = {k: v for k, v in sd.items() if k != "quantize.codebook_used"}
    meta = vq_metadata(sd)
    meta["vkspec.source"] = "janus"
    target = torch.float32 if dtype == "f32" else torch.float16
    out = {}
    for k, v in sd.items():
        keep_f32 = v.dim() <= 1 or k.startswith("quantize.")
        out[k] = v.float() if keep_f32 else cast(v.float(), "weight", "f32" if target == torch.float32 else "f16", k)
    save_file(out, path, {k: str(v) for k, v in meta.items()})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a Janus-Pro Hugging Face folder (config.json, weights, tokenizer.json)")
    ap.add_argument("out_prefix", help="writes OUT_PREFIX.safetensors, .tokenizer.json, .vq.safetensors")
    ap.add_argument("--dtype", choices=["keep", "f32", "f16", "bf16"], default="keep",
                    help="matrices and embeddings (default: the checkpoint's; norms and biases are f32)")
    ap.add_argument("--prompt-tokens", type=int, default=256,
                    help="condition positions a prompt is left-padded into (metadata cls_token_num)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    try:
        meta = convert(a.folder, a.out_prefix, a.dtype, a.prompt_tokens)
    except (ValueError, KeyError, RuntimeError, OSError) as e:
        print(f"convert_janus: {a.folder}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out_prefix}.safetensors: " + ", ".join(f"{k}={v}" for k, v in meta.items()
                                                             if k not in ("prompt_template",)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
