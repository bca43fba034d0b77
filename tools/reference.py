#!/usr/bin/env python3
"""PyTorch reference for parity tests: makes small random models and runs them.

  reference.py make-gpt OUT.safetensors --dim 128 --layers 2 --heads 2 --vocab 64 --classes 5 --grid 4
      (with --caption-dim C --cls P: a t2i model of P caption positions, in our file format)
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
  reference.py make-flashar OUT.safetensors --gpt MODEL --vertical-layers 1 --seed 0 --gate mlp --gate-norm joint
      a random FlashAR (tools/flashar_model.py) on the random GPT MODEL, gate included (--gate constant:
      g = sigmoid(0.7) everywhere; --gate-norm per-head: the MLP's inputs normalised head by head)
  reference.py flashar-logits MODEL --label 3 --tokens 1,2,... (all N cells) --out OUT.safetensors
      teacher forced under the diagonal mask: h, v [2, 1 + N, vocab] (label, null class), g [2, N]
  reference.py flashar-greedy MODEL --label 3 --cfg 2 --out OUT.json   (t2i: --caption CAP.npy; Janus-Pro
      and Lumina-mGPT: --prompt TEXT, through the tokenizer the file names; Lumina-mGPT decodes by
      flashar_lumina.decode_teacher_forced)
      generate_diagonal with top-k 1: {"tokens", "gaps"} in decoding order, "order" their raster cells
  reference.py make-vq OUT.safetensors --ch 32 --ch-mult 1,2 --z 32 --codebook 16 --embed 4 --in-ch 1
  reference.py vq-decode MODEL --tokens 1,2,3,4 --grid 2 --out OUT.safetensors   ->  pixels [1, C, H, W]
  reference.py make-chameleon-vq DIR --ch 32 --ch-mult 1,2 --z 32 --codebook 64 --embed 32 --res-blocks 1
      (a random Chameleon VQGAN as released: DIR/vqgan.yaml, DIR/vqgan.ckpt; tools/chameleon_vqgan.py)
  reference.py chameleon-vq-decode DIR --tokens 1,2,3,4 --grid 2 --out OUT.safetensors  ->  pixels [1, 3, H, W]
  reference.py vq-encode MODEL --pixels IN.safetensors --out OUT.safetensors       ->  ids [1, h*w]
  reference.py make-classifier OUT.safetensors
  reference.py classify MODEL --pixels IN.safetensors --out OUT.safetensors  ->  features, logits
  reference.py make-sr OUT.safetensors --scale 2 --ch 8 --depth 3   (random SRNet)
  reference.py sr MODEL --pixels IN.safetensors --out OUT.safetensors  ->  pixels [N, 1, sH, sW]
  reference.py make-latent-up OUT.safetensors --vocab 16 --embed 4 --ratio 2 --ch 8 --depth 2
      (random LatentUpsampler, row-causal mask applied to the stored weights)
  reference.py latent-up MODEL --vq VQ --tokens 1,2,3,4 --grid 2 --out OUT.safetensors
      ->  latents [1, e_dim, rW, rW] (before quantisation), ids [1, (rW)^2] (nearest code of VQ)
  reference.py make-janus DIR --dim 64 --layers 2 --heads 4 --ffn 128 --text-vocab 512 --image-vocab 64 --grid 4
               --head-hidden 64 --seed 0 [--shards N] [--dtype f32|bf16|f16] [--vq] [--cycle-gap 4]
      a random tiny Janus-Pro checkpoint folder in the released Hugging Face layout (janus_model.py):
      config.json, model.safetensors (or N shards + index), a tiny byte-level BPE tokenizer.json with
      the template's special tokens, tokenizer_config.json, special_tokens_map.json, processor_config.json;
      --vq adds a tiny gen_vision_model VQ (3 channels, 2x downsampling)
  reference.py janus-logits DIR --ids 392,398,58 --tokens 1,2,3 --out OUT.safetensors
      from the folder, in f32: rows [ids; uncond ids (first and last kept, the rest pad_id)], each
      followed by the image tokens -> logits [2, len(ids) + n, image_vocab] (gen_head at every position),
      hidden [2, len(ids) + n, dim]
  reference.py janus-greedy DIR --ids ... --cfg 5 --tokens-count N --out OUT.json
      greedy CFG generation (KV cache): {"tokens": [...], "gaps": [top-1 minus top-2 guided logit], ...}
  reference.py janus-decode DIR --tokens ... --out OUT.npy   ->  the VQ decoder's image [3, H, W] f32 in [-1, 1]
  reference.py make-spiece DIR --vocab 80   a tiny T5-style spiece.model (python3-sentencepiece)
  reference.py spiece-encode MODEL --texts FILE --max 120 --out OUT.json
      each line's ids as T5Tokenizer makes them (pieces, </s>, truncated), with the Python library
  reference.py make-lumina DIR --dim 64 --layers 2 --heads 4 --ffn 128 --codes 64 --groups 1 [--swin]
               --seed 0 [--shards N] [--dtype bf16|f32] [--scale 0.02 (the matrices' standard deviation)]
      a random tiny Lumina-mGPT folder in the released layout (lumina_model.py; q/k norm parameters
      random) with a tiny byte-level BPE tokenizer.json
  reference.py lumina-logits DIR --ids ... --codes ... --rows R --cols C --out OUT.safetensors
      ids: the engine's condition (BOS .. separator, image start, sizes); teacher forced through the
      released layout (line breaks after every row) -> logits [2 (cond, uncond), R * C, codes]
      at the positions predicting each image token, image columns only
  reference.py lumina-greedy DIR --ids ... --rows R --cols C --cfg 4 --out OUT.json
      inference_solver.py's loop, greedy: {"tokens": VQ codes, "gaps": top-2 gaps}
  reference.py make-t5 DIR --d-model 64 --layers 2 --heads 4 --d-kv 16 --d-ff 96 --vocab 128 --seed 0
               [--shards N] [--dtype f32|bf16]
      a random tiny T5 v1.1 encoder folder in Hugging Face's layout (t5_model.py): config.json,
      model.safetensors (or N shards + index); convert_t5.py converts it
  reference.py t5-encode DIR --ids 5,9,3 --length 16 --out OUT.safetensors
      from the folder, in f64: ids padded with 0 to --length (mask 1 on the ids, 0 on the padding)
      -> hidden [length, d_model] f32, the final-norm output at every position, padded ones included

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
                           GPTConfig, LatentUpsampler, SRNet, VQConfig, VQModel, caption_attention_mask, draft_head_offsets,
                           eagle_metadata, gpt_config_from_metadata, gpt_metadata, latent_upsampler_metadata, sr_metadata,
                           vq_config_from_metadata, vq_metadata)
import janus_model as jm  # noqa: E402


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
    """A random GPT in our file format: c2i, or t2i with --caption-dim (--cls caption positions)."""
    torch.manual_seed(a.seed)  # a t2i model's null caption is a buffer, drawn at construction
    t2i = dict(model_type="t2i", caption_dim=a.caption_dim, cls_token_num=a.cls) if a.caption_dim else {}
    cfg = GPTConfig(dim=a.dim, n_layer=a.layers, n_head=a.heads, vocab_size=a.vocab,
                    num_classes=0 if t2i else a.classes, grid_size=a.grid, **t2i)
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


def placed_caption(path, cfg):
    """A caption file ([1, tokens, caption_dim] f32) as LlamaGen places it: right-aligned in the
    cls_token_num positions, padding first and zero-valued tokens made padding. -> (placed
    [cls, caption_dim], emb_mask [cls], 1 = real)."""
    import numpy as np
    cap = torch.from_numpy(np.load(path)).float().reshape(-1, cfg.caption_dim)
    n, cls = cap.shape[0], cfg.cls_token_num
    placed = torch.zeros(cls, cfg.caption_dim)
    placed[cls - n:] = cap
    emb_mask = torch.zeros(cls)
    emb_mask[cls - n:] = (cap != 0).any(-1).float()
    return placed * emb_mask[:, None], emb_mask


def t2i_logits(a):
    t, meta = load_file(a.model)
    cfg = gpt_config_from_metadata(meta)
    m = GPT(cfg).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    placed, emb_mask = placed_caption(a.caption, cfg)
    cls = cfg.cls_token_num
    captions = torch.stack([placed, m.cls_embedding.uncond_embedding[:cls]])
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


def make_flashar(a):
    """A random FlashAR on the random GPT --gpt: the branch and gate drawn like the GPT (the gate's
    output layer too, so g varies from target to target), saved by flashar_model.save_flashar. A
    converted Janus-Pro --gpt (convert_janus.py) gets a flashar_janus.JanusFlashAR, its branch
    drawn as make-janus draws a model, saved beside --gpt's tokenizer with its metadata."""
    from flashar_model import ConstantGate, FlashAR, save_flashar
    t, meta = load_file(a.gpt)
    janus = meta.get("vkspec.family") == "janus-pro"
    if meta.get("vkspec.family") == "lumina-mgpt":
        return make_lumina_flashar(a, meta)
    if janus:
        import convert_janus as cj
        from flashar_janus import JanusFlashAR
        base, _ = cj.load_converted(a.gpt)
        m = JanusFlashAR.from_gpt(base, vertical_layers=a.vertical_layers, copy_backbone=False,
                                  gate_norm=a.gate_norm, prompt_tokens=int(meta["cls_token_num"]),
                                  pad_id=int(meta["pad_id"]))
        randomise_janus(m.vertical, a.seed)
    else:
        base = GPT(gpt_config_from_metadata(meta)).eval()
        base.load_state_dict({k: v.float() for k, v in t.items()})
        m = FlashAR.from_gpt(base, vertical_layers=a.vertical_layers, copy_backbone=False, gate_norm=a.gate_norm)
        randomise(m.vertical, a.seed, 0.08)
    randomise_gate(m.gate, m.cfg.vocab_size, torch.Generator().manual_seed(a.seed + 1))
    if a.gate == "constant":  # the released code without --hv-gate, with --hv-mix's learned logit
        m.gate, m.gate_kind, m.gate_hidden = ConstantGate(0.7), "constant", 0
    if janus:
        from flashar_janus import save_janus_flashar
        save_janus_flashar(m, a.out, meta, dtype="f32")
        tok = os.path.join(os.path.dirname(os.path.abspath(a.gpt)), meta["tokenizer"])
        beside = os.path.join(os.path.dirname(os.path.abspath(a.out)), meta["tokenizer"])
        if os.path.abspath(tok) != beside:
            import shutil
            shutil.copyfile(tok, beside)
    else:
        save_flashar(m, a.out)


def make_lumina_flashar(a, meta):
    """make-flashar on a converted Lumina-mGPT: the branch a perturbed copy of the backbone's tail
    (q/k norms included), the gate as make-flashar draws it; the backbone's tensors as they are."""
    from flashar_lumina import LuminaFlashAR, load_converted, save_lumina_flashar
    base, _ = load_converted(a.gpt)
    m = LuminaFlashAR.from_gpt(base, vertical_layers=a.vertical_layers, copy_backbone=False, gate_norm=a.gate_norm,
                               prompt_tokens=int(meta["cls_token_num"]), grid=int(meta["grid_size"]))
    g = torch.Generator().manual_seed(a.seed)
    with torch.no_grad():
        for p in m.vertical.parameters():
            p.mul_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
    randomise_gate(m.gate, m.cfg.vocab_size, g)
    save_lumina_flashar(m, a.out, a.gpt)


def randomise_gate(gate, vocab, g):
    """make-flashar's gate: fc1 ~ N(0, 1 / sqrt(2 vocab)), fc2 ~ 2 N(0, 1), bias 0.3, so g varies
    from target to target."""
    with torch.no_grad():
        gate.fc1.weight.copy_(torch.randn(gate.fc1.weight.shape, generator=g) / (2 * vocab) ** 0.5)
        gate.fc2.weight.copy_(2.0 * torch.randn(gate.fc2.weight.shape, generator=g))
        gate.fc2.bias.fill_(0.3)


def lumina_prompt_row(model_path, meta, prompt):
    """A converted Lumina-mGPT file's condition as the engine makes it (LuminaPrompts): BOS, the
    template's text through the tokenizer the file names, the separator, image start and sizes,
    right-aligned in cls_token_num positions -> (ids [1, P], emb_mask [1, P])."""
    import lumina_model as lm
    tok = jm.ByteBPE.from_file(os.path.join(os.path.dirname(os.path.abspath(model_path)), meta["tokenizer"]))
    W = int(meta["grid_size"])
    ids = [lm.BOS] + tok.encode(lm.prompt_text(prompt.strip(), 16 * W, 16 * W), add_special_tokens=False)
    ids += [lm.SEP] + lm.image_prefix(W, W)
    P = int(meta["cls_token_num"])
    row = torch.full((1, P), lm.PAD, dtype=torch.long)
    row[0, P - len(ids):] = torch.tensor(ids)
    mask = torch.zeros(1, P, dtype=torch.long)
    mask[0, P - len(ids):] = 1
    return row, mask


def flashar_logits(a):
    """Teacher forced over [class, every cell] under the diagonal mask: h, v [2, 1 + N, vocab] (rows
    label, null class) and the gate of every target given the two heads' sources, g [2, N]."""
    from flashar_model import load_flashar
    m, _ = load_flashar(a.model)
    toks = torch.tensor([ints(a.tokens)] * 2, dtype=torch.long)
    labels = torch.tensor([a.label, m.cfg.num_classes])
    with torch.no_grad():
        h, v = m(toks, labels)
        g = m.gate(h[:, m.h_src], v[:, m.v_src])
    save_file({"h": h.contiguous(), "v": v.contiguous(), "g": g.float().contiguous()}, a.out)


def flashar_greedy(a):
    """generate_diagonal with top-k 1 and CFG: {"tokens", "gaps"} in decoding order (diagonal by
    diagonal, ascending row), "order" the raster cell of each entry. A t2i FlashAR takes --caption
    (a caption file, placed as placed_caption does), a c2i one --label."""
    from flashar_model import diagonal_cells, generate_diagonal, load_flashar
    m, meta = load_flashar(a.model)
    W = m.cfg.grid_size
    order = [r * W + c for d in range(2 * W - 1) for r, c in diagonal_cells(W, d)]
    if m.cfg.model_type == "lumina-mgpt":
        from flashar_lumina import decode_teacher_forced
        cond, emb_mask = lumina_prompt_row(a.model, meta, a.prompt)
        toks, guided = decode_teacher_forced(m, cond, emb_mask, a.cfg)
        return write_greedy(a.out, toks, guided, order)
    if m.cfg.model_type == "janus-pro":
        cond, emb_mask = janus_prompt_row(a.model, meta, a.prompt)
    elif m.cfg.model_type == "t2i":
        placed, emb_mask = placed_caption(a.caption, m.cfg)
        cond, emb_mask = placed.unsqueeze(0), emb_mask.unsqueeze(0)
    else:
        cond, emb_mask = torch.tensor([a.label]), None
    toks, _, mixed = generate_diagonal(m, cond, cfg_scale=a.cfg, top_k=1, return_logits=True, emb_mask=emb_mask)
    write_greedy(a.out, toks, mixed, order)


def write_greedy(path, toks, guided, order):
    """flashar-greedy's JSON: image 0's tokens and top-2 gaps of its guided logits in `order`."""
    import json
    top2 = guided[0].topk(2, dim=-1).values
    gaps = (top2[:, 0] - top2[:, 1]).tolist()
    with open(path, "w") as f:
        json.dump({"tokens": [int(toks[0, n]) for n in order], "gaps": [gaps[n] for n in order], "order": order}, f)
        f.write("\n")


def janus_prompt_row(model_path, meta, prompt):
    """A converted Janus-Pro file's prompt as the engine makes it: the SFT template through the
    tokenizer.json it names (BOS added), left-padded with pad_id to cls_token_num positions ->
    (ids [1, P], emb_mask [1, P])."""
    tok = jm.ByteBPE.from_file(os.path.join(os.path.dirname(os.path.abspath(model_path)), meta["tokenizer"]))
    ids = tok.encode(jm.sft_prompt(prompt))
    P, pad = int(meta["cls_token_num"]), int(meta["pad_id"])
    if len(ids) > P:
        raise SystemExit(f"flashar-greedy: the prompt takes {len(ids)} tokens, the model {P}")
    row = torch.full((1, P), pad, dtype=torch.long)
    row[0, P - len(ids):] = torch.tensor(ids)
    mask = torch.zeros(1, P, dtype=torch.long)
    mask[0, P - len(ids):] = 1
    return row, mask


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


def make_sr(a):
    m = SRNet(a.scale, a.ch, a.depth)
    randomise(m, a.seed, 0.2)
    save_file({k: v.float().contiguous() for k, v in m.state_dict().items()}, a.out, sr_metadata(m))


def sr(a):
    t, meta = load_file(a.model)
    m = SRNet(int(meta["scale"]), int(meta["channels"]), int(meta["depth"])).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    px, _ = load_file(a.pixels)
    with torch.no_grad():
        y = m(px["pixels"].float())
    save_file({"pixels": y.contiguous()}, a.out)


def make_latent_up(a):
    m = LatentUpsampler(a.vocab, a.embed, a.ratio, a.ch, a.depth)
    randomise(m, a.seed, 0.3)
    sd = {k: v.float().contiguous() for k, v in m.state_dict().items()}
    for k in sd:  # the mask as training exports it: zeros stored on the row below
        if k.endswith(".weight") and sd[k].dim() == 4:
            sd[k] = (sd[k] * m.out.mask).contiguous()
    save_file(sd, a.out, latent_upsampler_metadata(m))


def latent_up(a):
    t, meta = load_file(a.model)
    m = LatentUpsampler(int(meta["vocab_size"]), int(meta["embed_dim"]), int(meta["ratio"]), int(meta["channels"]),
                        int(meta["depth"])).eval()
    m.load_state_dict({k: v.float() for k, v in t.items()})
    vq = load_vq(a.vq)
    tok = torch.tensor(ints(a.tokens), dtype=torch.long).reshape(1, a.grid, a.grid)
    with torch.no_grad():
        z = m(tok)
        _, _, idx, _ = vq.quantize(z)
    save_file({"latents": z.contiguous(), "ids": idx.reshape(1, -1).to(torch.int32).contiguous()}, a.out)


def randomise_janus(model, seed):
    """Random Janus weights scaled so the image-token path dominates: the fed token's embedding
    (gen_embed, gen_aligner) is large next to what the layers add, so the next token depends
    strongly on the previous one, and gen_head spreads the logits by several units (clear top-2
    gaps for greedy parity)."""
    g = torch.Generator().manual_seed(seed)
    gain = {"gen_embed.weight": 1.0, "gen_aligner.layers.0.weight": 2.5, "gen_aligner.layers.2.weight": 2.5,
            "language_model.model.embed_tokens.weight": 1.0, "gen_head.output_mlp_projector.weight": 2.0,
            "gen_head.vision_head.weight": 3.0}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif name in gain:
                fan_in = 1 if "embed" in name and "proj" not in name else p.shape[1]
                p.copy_(gain[name] / fan_in ** 0.5 * torch.randn(p.shape, generator=g))
            else:  # trunk projections: about a third of a unit-gain layer
                p.copy_(0.35 / p.shape[1] ** 0.5 * torch.randn(p.shape, generator=g))


def plant_janus_cycle(model, seed, contexts=4, gap=4.0):
    """Refit gen_head.vision_head (ridge regression on the gen_head features of every image token,
    fed after a few random prompts) so the next token is a single random cycle through the whole
    image vocabulary: greedy decoding then visits every token instead of falling into the short
    cycles or fixed points of a random map, and the next token is predictable from the previous
    one (what speculative methods need to accept drafts)."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(seed + 7)
    order = torch.randperm(cfg.image_vocab, generator=g)
    succ = torch.empty_like(order)
    succ[order] = order.roll(-1)
    head = model.gen_head
    with torch.no_grad():
        feats = []
        for _ in range(contexts):
            prompt = torch.randint(0, cfg.text_vocab, (1, 6), generator=g).expand(cfg.image_vocab, -1)
            x = torch.cat([model.embed_text(prompt), model.embed_image(torch.arange(cfg.image_vocab)[:, None])], dim=1)
            h = model.hidden(x, torch.arange(x.shape[1]))[:, -1]
            feats.append(head.vision_activation(head.output_mlp_projector(h)))
        z = torch.cat(feats)                                   # [contexts * V, head_hidden]
        y = F_one_hot(succ.repeat(contexts), cfg.image_vocab) * gap
        z1 = torch.cat([z, torch.ones(z.shape[0], 1)], dim=1)  # fit the bias too
        w = torch.linalg.solve(z1.t() @ z1 + 1e-2 * torch.eye(z1.shape[1]), z1.t() @ y)
        head.vision_head.weight.copy_(w[:-1].t())
        head.vision_head.bias.copy_(w[-1])


def F_one_hot(idx, n):
    return torch.nn.functional.one_hot(idx, n).float() - 1.0 / n


JANUS_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def make_janus(a):
    if a.dtype not in JANUS_DTYPES:
        raise SystemExit(f"make-janus: --dtype {a.dtype}: one of {', '.join(JANUS_DTYPES)}")
    cfg = jm.JanusConfig(dim=a.dim, n_layer=a.layers, n_head=a.heads, ffn_hidden=a.ffn, text_vocab=a.text_vocab,
                         image_vocab=a.image_vocab, head_hidden=a.head_hidden, grid=a.grid)
    m = jm.JanusGen(cfg)
    randomise_janus(m, a.seed)
    plant_janus_cycle(m, a.seed, gap=a.cycle_gap)
    vq = None
    if a.vq:
        vq = VQModel(VQConfig(ch=32, ch_mult=[1, 2], z_channels=32, codebook_size=a.image_vocab, codebook_embed_dim=8,
                              num_res_blocks=1, in_channels=3, out_channels=3))
        randomise(vq, a.seed + 1, 0.1)
        with torch.no_grad():  # pixels mostly inside [-1, 1], so janus-decode's clamp seldom bites
            vq.decoder.conv_out.weight.mul_(0.3)
            vq.decoder.conv_out.bias.mul_(0.3)
    os.makedirs(a.out, exist_ok=True)
    tok_path = os.path.join(a.out, "tokenizer.json")
    jm.write_json(a.out, "tokenizer.json", jm.build_byte_bpe(jm.TINY_TOKENIZER_TEXTS, a.text_vocab))
    jm.save_checkpoint_folder(m, a.out, tok_path, vq=vq, dtype=JANUS_DTYPES[a.dtype], shards=a.shards)


def janus_rows(folder, ids):
    pad = jm.tokenizer_ids(folder)["pad_id"]
    ids = torch.tensor(ints(ids), dtype=torch.long)
    return ids, pad, torch.stack([ids, jm.uncond_ids(ids, pad)])


def janus_logits(a):
    m, _ = jm.load_checkpoint_folder(a.model, quiet=True)
    _, _, rows = janus_rows(a.model, a.ids)
    with torch.no_grad():
        logits, h = m.teacher_forced_logits(rows, ints(a.tokens), return_hidden=True)
    save_file({"logits": logits.contiguous(), "hidden": h.float().contiguous()}, a.out)


def janus_greedy(a):
    import json
    m, _ = jm.load_checkpoint_folder(a.model, quiet=True)
    ids, pad, _ = janus_rows(a.model, a.ids)
    n = a.tokens_count or m.cfg.num_image_tokens
    toks, gaps = m.generate(ids, cfg=a.cfg, greedy=True, pad_id=pad, n_tokens=n)
    with open(a.out, "w") as f:
        json.dump({"tokens": toks.tolist(), "gaps": [float(g) for g in gaps], "cfg": a.cfg, "ids": ids.tolist(),
                   "pad_id": pad, "min_gap": float(gaps.min())}, f)
        f.write("\n")


def janus_decode(a):
    import numpy as np
    _, vq = jm.load_checkpoint_folder(a.model, with_vq=True, quiet=True)
    toks = torch.tensor(ints(a.tokens), dtype=torch.long)
    g = int(round(toks.numel() ** 0.5))
    if g * g != toks.numel():
        raise SystemExit(f"janus-decode: {toks.numel()} tokens are not a square grid")
    with torch.no_grad():
        px = vq.decode_code(toks.reshape(1, g, g))[0].clamp(-1, 1)
    np.save(a.out, px.float().numpy())


def make_chameleon_vq(a):
    import chameleon_vqgan as cv
    kw = dict(ch=a.ch, ch_mult=tuple(ints(a.ch_mult)), z_channels=a.z, n_embed=a.codebook, embed_dim=a.embed,
              num_res_blocks=a.res_blocks, resolution=16 * 2 ** (len(ints(a.ch_mult)) - 1))
    cv.save_released(cv.random_tiny(seed=a.seed, **kw), a.out)


def chameleon_vq_decode(a):
    import chameleon_vqgan as cv
    m = cv.load_released(a.model)
    px = m.decode_codes(torch.tensor(ints(a.tokens), dtype=torch.long).reshape(1, a.grid, a.grid))
    save_file({"pixels": px.float().contiguous()}, a.out)


def make_lumina(a):
    import lumina_model as lm
    m = lm.random_tiny(dim=a.dim, n_layer=a.layers, n_head=a.heads, ffn_hidden=a.ffn, image_codes=a.codes,
                       groups=a.groups, swin_norm=a.swin, seed=a.seed, scale=a.scale)
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    lm.save_checkpoint_folder(m, a.out, dtype=dtypes[a.dtype], shards=a.shards)
    jm.write_json(a.out, "tokenizer.json", jm.build_byte_bpe(jm.TINY_TOKENIZER_TEXTS + [lm.PROMPT_TEMPLATE], 600))


def lumina_split(ids):
    """Condition ids (BOS .. separator, image start, two sizes) -> the prompt part (BOS .. separator)."""
    ids = ints(ids)
    return ids[:-3]


def lumina_logits(a):
    import lumina_model as lm
    m = lm.load_checkpoint_folder(a.model).float()
    codes = torch.tensor(ints(a.codes), dtype=torch.long).reshape(a.rows, a.cols)
    with torch.no_grad():
        c, u = m.teacher_forced(lumina_split(a.ids), codes)
    image = slice(lm.IMAGE_FIRST, lm.IMAGE_FIRST + m.cfg.image_codes)
    save_file({"logits": torch.stack([c[:, image], u[:, image]]).contiguous()}, a.out)


def lumina_greedy(a):
    import json
    import lumina_model as lm
    m = lm.load_checkpoint_folder(a.model).float()
    codes, gaps = m.generate(lumina_split(a.ids), a.rows, a.cols, cfg=a.cfg, greedy=True)
    with open(a.out, "w") as f:
        json.dump({"tokens": codes.flatten().tolist(), "gaps": [float(g) for g in gaps]}, f)
        f.write("\n")


def make_t5(a):
    import t5_model as t5
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    if a.dtype not in dtypes:
        raise SystemExit(f"make-t5: --dtype {a.dtype}: f32 or bf16")
    m = t5.random_tiny(d_model=a.d_model, n_layer=a.layers, n_head=a.heads, d_kv=a.d_kv, d_ff=a.d_ff,
                       vocab=a.vocab, seed=a.seed)
    t5.save_checkpoint_folder(m, a.out, dtype=dtypes[a.dtype], shards=a.shards)


def t5_encode(a):
    import t5_model as t5
    m = t5.load_checkpoint_folder(a.model, dtype=torch.float64)
    ids = ints(a.ids)
    if not ids or len(ids) > a.length:
        raise SystemExit(f"t5-encode: {len(ids)} ids for --length {a.length}: give 1 to {a.length}")
    row = torch.zeros(1, a.length, dtype=torch.long)
    row[0, :len(ids)] = torch.tensor(ids)
    mask = torch.zeros(1, a.length, dtype=torch.long)
    mask[0, :len(ids)] = 1
    try:
        hidden = m.encode(row, mask)[0]
    except ValueError as e:
        raise SystemExit(f"t5-encode: {e}")
    save_file({"hidden": hidden.float().contiguous()}, a.out)


SPIECE_CORPUS = [  # what the tests' tiny T5 SentencePiece model learns its pieces from
    "a blue porsche 356 parked in front of a yellow brick wall.", "an astronaut riding a horse, in the forest",
    "a red fox in the snow", "a map of the united states made out of sushi.", "a photo of a cat and a dog",
    "the image of a small grayscale piece of clothing", "a portrait photo of a kangaroo wearing an orange hoodie",
    "ünïcödé çaps and istanbul", "an ankle boot", "a pair of trousers, a bag and a coat"]


def make_spiece(a):
    """A tiny T5-style SentencePiece model (unigram; pad 0, </s> 1, <unk> 2, no BOS, as T5's)."""
    import sentencepiece as spm
    os.makedirs(a.out, exist_ok=True)
    corpus = os.path.join(a.out, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(SPIECE_CORPUS * 4) + "\n")
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(a.out, "spiece"), vocab_size=a.vocab,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   character_coverage=1.0, minloglevel=2)


def spiece_encode(a):
    """Each line of --texts as T5Tokenizer encodes it: the pieces' ids, </s>, at most --max ids."""
    import json
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=a.model)
    with open(a.texts, encoding="utf-8") as f:
        texts = f.read().split("\n")
    ids = [sp.encode(t)[:a.max - 1] + [sp.eos_id()] for t in texts]
    with open(a.out, "w") as f:
        json.dump(ids, f)


# The subcommands: each one's function, its positional path, then its options in order: "--x" a
# required string, "--x:int" a required integer, ("--x", d) one defaulting to d (of d's type).
COMMANDS = {
    "make-gpt": (make_gpt, "out", [("--dim", 128), ("--layers", 2), ("--heads", 2), ("--vocab", 64), ("--classes", 5),
                                   ("--grid", 4), ("--seed", 0), ("--cls", 1), ("--caption-dim", 0)]),
    "make-t2i": (make_t2i, "out", [("--dim", 64), ("--layers", 2), ("--heads", 2), ("--vocab", 32), ("--grid", 4),
                                   ("--cls", 8), ("--caption-dim", 16), ("--seed", 0)]),
    "make-caption": (make_caption, "out", [("--tokens", 5), ("--dim", 16), ("--seed", 1)]),
    "t2i-logits": (t2i_logits, "model", ["--caption", "--tokens", "--out"]),
    "make-heads": (make_heads, "out", ["--gpt", ("--seed", 0)]),
    "make-eagle": (make_eagle, "out", ["--gpt", ("--layers", 1), ("--seed", 0)]),
    "eagle-forward": (eagle_forward, "drafter", ["--gpt", "--tokens", "--features", "--out"]),
    "gpt-logits": (gpt_logits, "model", ["--label:int", "--tokens", "--out"]),
    "make-flashar": (make_flashar, "out", ["--gpt", ("--vertical-layers", 1), ("--seed", 0), ("--gate", "mlp"),
                                           ("--gate-norm", "joint")]),
    "flashar-logits": (flashar_logits, "model", ["--label:int", "--tokens", "--out"]),
    "flashar-greedy": (flashar_greedy, "model", [("--label", 0), ("--caption", ""), ("--prompt", ""), ("--cfg", 2.0),
                                                 "--out"]),
    "make-vq": (make_vq, "out", [("--ch", 32), ("--z", 32), ("--codebook", 16), ("--embed", 4), ("--in-ch", 1),
                                 ("--res-blocks", 2), ("--seed", 0), ("--ch-mult", "1,2")]),
    "vq-decode": (vq_decode, "model", ["--tokens", "--grid:int", "--out"]),
    "vq-encode": (vq_encode, "model", ["--pixels", "--out"]),
    "make-classifier": (make_classifier, "out", [("--seed", 0)]),
    "classify": (classify, "model", ["--pixels", "--out"]),
    "make-sr": (make_sr, "out", [("--scale", 2), ("--ch", 8), ("--depth", 3), ("--seed", 0)]),
    "sr": (sr, "model", ["--pixels", "--out"]),
    "make-latent-up": (make_latent_up, "out", [("--vocab", 16), ("--embed", 4), ("--ratio", 2), ("--ch", 8),
                                               ("--depth", 2), ("--seed", 0)]),
    "latent-up": (latent_up, "model", ["--vq", "--tokens", "--grid:int", "--out"]),
    "make-janus": (make_janus, "out", [("--dim", 64), ("--layers", 2), ("--heads", 4), ("--ffn", 128),
                                       ("--text-vocab", 512), ("--image-vocab", 64), ("--grid", 4),
                                       ("--head-hidden", 64), ("--seed", 0), ("--shards", 1), ("--dtype", "bf16"),
                                       ("--vq", False), ("--cycle-gap", 4.0)]),
    "janus-logits": (janus_logits, "model", ["--ids", "--tokens", "--out"]),
    "janus-greedy": (janus_greedy, "model", ["--ids", ("--cfg", 5.0), ("--tokens-count", 0), "--out"]),
    "janus-decode": (janus_decode, "model", ["--tokens", "--out"]),
    "make-chameleon-vq": (make_chameleon_vq, "out", [("--ch", 32), ("--ch-mult", "1,2"), ("--z", 32), ("--codebook", 64),
                                                     ("--embed", 32), ("--res-blocks", 1), ("--seed", 0)]),
    "chameleon-vq-decode": (chameleon_vq_decode, "model", ["--tokens", "--grid:int", "--out"]),
    "make-spiece": (make_spiece, "out", [("--vocab", 80)]),
    "spiece-encode": (spiece_encode, "model", ["--texts", ("--max", 120), "--out"]),
    "make-lumina": (make_lumina, "out", [("--dim", 64), ("--layers", 2), ("--heads", 4), ("--ffn", 128),
                                         ("--codes", 64), ("--groups", 1), ("--swin", False), ("--seed", 0),
                                         ("--shards", 1), ("--dtype", "bf16"), ("--scale", 0.02)]),
    "lumina-logits": (lumina_logits, "model", ["--ids", "--codes", "--rows:int", "--cols:int", "--out"]),
    "lumina-greedy": (lumina_greedy, "model", ["--ids", "--rows:int", "--cols:int", ("--cfg", 4.0), "--out"]),
    "make-t5": (make_t5, "out", [("--d-model", 64), ("--layers", 2), ("--heads", 4), ("--d-kv", 16), ("--d-ff", 96),
                                 ("--vocab", 128), ("--seed", 0), ("--shards", 1), ("--dtype", "f32")]),
    "t5-encode": (t5_encode, "model", ["--ids", ("--length", 16), "--out"]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, (_, path, options) in COMMANDS.items():
        p = sub.add_parser(name)
        p.add_argument(path)
        for o in options:
            if isinstance(o, tuple) and isinstance(o[1], bool):
                p.add_argument(o[0], action="store_true")
            elif isinstance(o, tuple):
                p.add_argument(o[0], type=type(o[1]), default=o[1])
            elif o.endswith(":int"):
                p.add_argument(o[:-len(":int")], type=int, required=True)
            else:
                p.add_argument(o, required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    COMMANDS[a.cmd][0](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
