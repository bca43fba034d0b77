#!/usr/bin/env python3
"""PyTorch reference for parity tests: makes small random models and runs them.

  reference.py make-gpt OUT.safetensors --dim 128 --layers 2 --heads 2 --vocab 64 --classes 5 --grid 4
  reference.py gpt-logits MODEL --label 3 --tokens 1,2,3 --out OUT.safetensors
      logits [2, 1 + len(tokens), vocab] for the batch (label, null class), teacher-forced:
      position 0 is the condition, position 1 + n feeds image token n.
  reference.py make-t2i OUT.pt --dim 64 --layers 2 --heads 2 --vocab 32 --grid 4 --cls 8 --caption-dim 16
      a LlamaGen-layout t2i checkpoint ({"model": state dict}, with freqs_cis) for convert_llamagen.py
  reference.py make-caption OUT.npy --tokens 5 --dim 16   (LlamaGen's T5 layout: [1, tokens, dim] f32)
  reference.py t2i-logits MODEL --caption CAP.npy --tokens 1,2,3 --out OUT.safetensors
      logits [2, cls + len(tokens), vocab] for the batch (caption, null caption), teacher-forced,
      caption right-aligned in the cls condition positions, padding hidden (LlamaGen's emb_masks)
  reference.py make-heads OUT.safetensors --gpt MODEL  (random draft heads h1..h4, v1, v2 on MODEL)
  reference.py make-eagle OUT.safetensors --gpt MODEL --layers 1  (a random EAGLE drafter on MODEL)
  reference.py eagle-forward DRAFTER --gpt MODEL --tokens 1,2,3 --features IN.safetensors --out OUT.safetensors
      the drafter over elements 0 .. len(tokens) - 1 (element j reads token j and features[:, j]),
      causal: hidden = g [B, T, dim], logits = MODEL's output(g) [B, T, vocab]
  reference.py make-vq OUT.safetensors --ch 32 --ch-mult 1,2 --z 32 --codebook 16 --embed 4 --in-ch 1
  reference.py vq-decode MODEL --tokens 1,2,3,4 --grid 2 --out OUT.safetensors   ->  pixels [1, C, H, W]
  reference.py vq-encode MODEL --pixels IN.safetensors --out OUT.safetensors       ->  ids [1, h*w]
  reference.py make-classifier OUT.safetensors
  reference.py classify MODEL --pixels IN.safetensors --out OUT.safetensors  ->  features, logits

Outputs are safetensors files (tensor "logits", "pixels" or "ids") so the C++ tests read them with
the engine's own reader. Exit code 77 when PyTorch is missing (CTest: skipped).
"""
import argparse
import os
import sys

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_file, save_file  # noqa: E402
from vkspec_models import (DRAFT_HEAD_NAMES, EAGLE_PREFIX, GPT, Classifier, DraftHeads, EagleDrafter,  # noqa: E402
                           GPTConfig, VQConfig, VQModel, caption_attention_mask, eagle_metadata, draft_head_offsets, gpt_config_from_metadata, gpt_metadata, vq_config_from_metadata,
                           vq_metadata)


def ints(text):
    return [int(v) for v in text.split(",") if v != ""]


def randomise(model, seed, scale):
    """Random weights with enough spread that every op matters (training init zeroes some)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or ".norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(scale * torch.randn(p.shape, generator=g))


def make_gpt(a):
    cfg = GPTConfig(dim=a.dim, n_layer=a.layers, n_head=a.heads, vocab_size=a.vocab,
                    num_classes=a.classes, grid_size=a.grid)
    m = GPT(cfg)
    randomise(m, a.seed, 0.08)
    save_file({k: v.float() for k, v in m.state_dict().items()}, a.out, gpt_metadata(cfg))


def make_t2i(a):
    torch.manual_seed(a.seed)  # the null caption is a buffer, drawn at construction
    cfg = GPTConfig(dim=a.dim, n_layer=a.layers, n_head=a.heads, vocab_size=a.vocab, num_classes=0,
                    grid_size=a.grid, cls_token_num=a.cls, model_type="t2i", caption_dim=a.caption_dim)
    m = GPT(cfg)
    randomise(m, a.seed, 0.08)
    sd = {k: v.float() for k, v in m.state_dict().items()}
    sd["freqs_cis"] = m.rope.clone()  # LlamaGen checkpoints carry the RoPE table; the converter drops it
    torch.save({"model": sd, "steps": 0}, a.out)


def make_caption(a):
    import numpy as np
    g = torch.Generator().manual_seed(a.seed)
    np.save(a.out, torch.randn(1, a.tokens, a.dim, generator=g).numpy().astype(np.float32))


def t2i_logits(a):
    import numpy as np
    t, meta = load_file(a.model)
    cfg = gpt_config_from_metadata(meta)
    m = GPT(cfg).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    cap = torch.from_numpy(np.load(a.caption)).float().reshape(-1, cfg.caption_dim)
    n, cls = cap.shape[0], cfg.cls_token_num
    placed = torch.zeros(cls, cfg.caption_dim)
    placed[cls - n:] = cap
    emb_mask = torch.zeros(cls)
    emb_mask[cls - n:] = (cap != 0).any(-1).float()
    captions = torch.stack([placed * emb_mask[:, None], m.cls_embedding.uncond_embedding[:cls]])
    toks = torch.tensor([ints(a.tokens)] * 2, dtype=torch.long)
    with torch.no_grad():
        x = m.embed(toks, captions)
        S = x.shape[1]
        h = m.hidden(x, torch.arange(S), caption_attention_mask(torch.stack([emb_mask, emb_mask]), S))
        logits = m.output(h).float()
    save_file({"logits": logits.contiguous(), "hidden": h.float().contiguous()}, a.out)


def make_heads(a):
    _, meta = load_file(a.gpt)
    cfg = gpt_config_from_metadata(meta)
    heads = DraftHeads(cfg.dim)
    randomise(heads, a.seed, 0.08)
    offs = draft_head_offsets(cfg.grid_size)
    save_file({k: v.float() for k, v in heads.state_dict().items()}, a.out,
              {"vkspec.kind": "draft_heads", "dim": str(cfg.dim), "vocab_size": str(cfg.vocab_size),
               "grid_size": str(cfg.grid_size), "heads": ",".join(DRAFT_HEAD_NAMES),
               "offsets": ",".join(str(offs[n]) for n in DRAFT_HEAD_NAMES), "placement": "post_norm"})


def make_eagle(a):
    _, meta = load_file(a.gpt)
    cfg = gpt_config_from_metadata(meta)
    d = EagleDrafter(cfg, n_layer=a.layers)
    randomise(d, a.seed, 0.08)
    save_file({EAGLE_PREFIX + k: v.float() for k, v in d.state_dict().items()}, a.out,
              eagle_metadata(cfg, a.layers))


def eagle_forward(a):
    gt, gmeta = load_file(a.gpt)
    cfg = gpt_config_from_metadata(gmeta)
    t, meta = load_file(a.drafter)
    d = EagleDrafter(cfg, n_layer=int(meta["n_layer"]), embed_norm=meta["embed_norm"] == "rmsnorm").eval()
    d.load_state_dict({k[len(EAGLE_PREFIX):]: v.float() for k, v in t.items()})
    feats = load_file(a.features)[0]["features"].float()  # [B, T, D]
    toks = torch.tensor(ints(a.tokens), dtype=torch.long)
    emb = gt["tok_embeddings.weight"].float()[toks].unsqueeze(0).expand(feats.shape[0], -1, -1)
    with torch.no_grad():
        g = d(emb, feats, torch.arange(len(toks)) + cfg.cls_token_num)
        logits = g @ gt["output.weight"].float().t()
    save_file({"hidden": g.float().contiguous(), "logits": logits.float().contiguous()}, a.out)


def gpt_logits(a):
    t, meta = load_file(a.model)
    cfg = gpt_config_from_metadata(meta)
    m = GPT(cfg).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    toks = torch.tensor([ints(a.tokens)] * 2, dtype=torch.long)
    labels = torch.tensor([a.label, cfg.num_classes])
    with torch.no_grad():
        x = m.embed(toks, labels)
        h = m.hidden(x, torch.arange(x.shape[1]))
        logits = m.output(h).float()
    save_file({"logits": logits.contiguous(), "hidden": h.float().contiguous()}, a.out)


def make_vq(a):
    cfg = VQConfig(ch=a.ch, ch_mult=ints(a.ch_mult), z_channels=a.z, codebook_size=a.codebook,
                   codebook_embed_dim=a.embed, num_res_blocks=a.res_blocks, in_channels=a.in_ch,
                   out_channels=a.in_ch)
    m = VQModel(cfg)
    randomise(m, a.seed, 0.1)
    save_file({k: v.float() for k, v in m.state_dict().items()}, a.out, vq_metadata(cfg))


def load_vq(path):
    t, meta = load_file(path)
    m = VQModel(vq_config_from_metadata(meta)).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()}, strict=False)
    return m


def vq_decode(a):
    m = load_vq(a.model)
    idx = torch.tensor(ints(a.tokens), dtype=torch.long).reshape(1, a.grid, a.grid)
    with torch.no_grad():
        px = m.decode_code(idx)
    save_file({"pixels": px.float().contiguous()}, a.out)


def vq_encode(a):
    m = load_vq(a.model)
    px, _ = load_file(a.pixels)
    with torch.no_grad():
        _, _, idx, _ = m.encode(px["pixels"].float())
    save_file({"ids": idx.reshape(1, -1).to(torch.int32).contiguous()}, a.out)


def make_classifier(a):
    m = Classifier()
    randomise(m, a.seed, 0.05)
    meta = {"vkspec.kind": "classifier", "in_channels": "1", "image_size": "32", "num_classes": "10",
            "feature_dim": "256"}
    save_file({k: v.float() for k, v in m.state_dict().items()}, a.out, meta)


def classify(a):
    t, _ = load_file(a.model)
    m = Classifier().eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    px, _ = load_file(a.pixels)
    with torch.no_grad():
        f = m.features(px["pixels"].float())
        logits = m.fc2(f)
    save_file({"features": f.contiguous(), "logits": logits.contiguous()}, a.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("make-gpt")
    p.add_argument("out")
    for k, d in [("dim", 128), ("layers", 2), ("heads", 2), ("vocab", 64), ("classes", 5), ("grid", 4), ("seed", 0)]:
        p.add_argument("--" + k, type=int, default=d)
    p = sub.add_parser("make-t2i")
    p.add_argument("out")
    for k, d in [("dim", 64), ("layers", 2), ("heads", 2), ("vocab", 32), ("grid", 4), ("cls", 8), ("caption-dim", 16),
                 ("seed", 0)]:
        p.add_argument("--" + k, type=int, default=d)
    p = sub.add_parser("make-caption")
    p.add_argument("out")
    for k, d in [("tokens", 5), ("dim", 16), ("seed", 1)]:
        p.add_argument("--" + k, type=int, default=d)
    p = sub.add_parser("t2i-logits")
    p.add_argument("model")
    p.add_argument("--caption", required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("make-heads")
    p.add_argument("out")
    p.add_argument("--gpt", required=True)
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("make-eagle")
    p.add_argument("out")
    p.add_argument("--gpt", required=True)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("eagle-forward")
    p.add_argument("drafter")
    p.add_argument("--gpt", required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--features", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("gpt-logits")
    p.add_argument("model")
    p.add_argument("--label", type=int, required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("make-vq")
    p.add_argument("out")
    for k, d in [("ch", 32), ("z", 32), ("codebook", 16), ("embed", 4), ("in-ch", 1), ("res-blocks", 2), ("seed", 0)]:
        p.add_argument("--" + k, type=int, default=d)
    p.add_argument("--ch-mult", default="1,2")
    p = sub.add_parser("vq-decode")
    p.add_argument("model")
    p.add_argument("--tokens", required=True)
    p.add_argument("--grid", type=int, required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("vq-encode")
    p.add_argument("model")
    p.add_argument("--pixels", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("make-classifier")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("classify")
    p.add_argument("model")
    p.add_argument("--pixels", required=True)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    {"make-gpt": make_gpt, "make-t2i": make_t2i, "make-caption": make_caption, "t2i-logits": t2i_logits,
     "make-heads": make_heads, "make-eagle": make_eagle, "eagle-forward": eagle_forward, "gpt-logits": gpt_logits, "make-vq": make_vq, "vq-decode": vq_decode,
     "vq-encode": vq_encode, "make-classifier": make_classifier, "classify": classify}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
