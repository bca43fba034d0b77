"""Self-distillation set for SSD's latent heads: the shipped target samples its own images.

SSD (Xiang et al. 2026) trains its heads on the target model's own generations rather than on
the dataset, so the heads learn the distribution they will have to draft at inference. This tool
samples class-conditional images from a GPT asset with its default sampler (cfg, temperature,
top-k, top-p from the safetensors metadata, see the asset's card) and writes them in chunks:

  <out>/<split>_<chunk:05d>.npz   tokens int16 [B, grid*grid] (raster order), labels int64 [B],
                                  seeds int64 [B] (chunk seed, same for the chunk),
                                  optional hidden float16 [B, grid*grid, dim] (--save-hidden)

Chunk c of split s uses seed `--seed + c` (train) or `--seed + 1_000_000 + c` (test) and labels
0..9 repeated, so chunks are reproducible and a killed run resumes by skipping the chunks that
exist (each is written atomically). `load_distill_set()` concatenates them.

Sampling runs batched in PyTorch with a preallocated KV cache (`sample()` below): the same
arithmetic as `GPT.generate` (which concatenates its cache every step, an O(N^2) copy that
dominates on a CPU), the same RNG calls, so with one batch the tokens agree with `GPT.generate`
up to float rounding (--check compares the two). `hidden` is the target's final normalised
hidden state of the conditional row at the position that predicts each token (what `output`
reads): position n holds the state whose logits predicted token n.
"""
import argparse
import glob
import os
import time

import numpy as np
import torch

import common as C
from safetensors_io import load_file
from vkspec_models import GPT, apply_rope, gpt_config_from_metadata

TEST_SEED_OFFSET = 1_000_000


def load_gpt(path):
    sd, meta = load_file(path)
    model = GPT(gpt_config_from_metadata(meta))
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    return model.eval(), meta


def load_frozen_base(assets_dir, name):
    """The target a drafter or heads are trained on: assets_dir/name.safetensors, eval mode, no grads."""
    model, meta = load_gpt(os.path.join(assets_dir, name + ".safetensors"))
    model.requires_grad_(False)
    return model, meta


def sampler_from_meta(meta):
    return dict(cfg_scale=float(meta.get("cfg", 1.0)), temperature=float(meta.get("temperature", 1.0)),
                top_k=int(meta.get("top_k", 0)), top_p=float(meta.get("top_p", 1.0)))


@torch.no_grad()
def sample(model, labels, cfg_scale=1.0, temperature=1.0, top_k=0, top_p=1.0, generator=None,
           want_hidden=False):
    """Like GPT.generate (c2i only) with a preallocated KV cache. Returns (tokens [B,N] long,
    hidden [B,N,D] of the conditional row or None)."""
    cfg = model.cfg
    assert cfg.model_type == "c2i"
    B, N, H, Dh = labels.shape[0], cfg.block_size, cfg.n_head, cfg.head_dim
    use_cfg = cfg_scale > 1.0
    lab = torch.cat([labels, torch.full_like(labels, cfg.num_classes)]) if use_cfg else labels
    R = lab.shape[0]
    kc = [torch.zeros(R, H, N, Dh) for _ in model.layers]
    vc = [torch.zeros(R, H, N, Dh) for _ in model.layers]
    x = model.embed(labels=lab)  # [R,1,D]
    out = torch.empty(B, N, dtype=torch.long)
    hid = torch.empty(B, N, cfg.dim) if want_hidden else None
    scale = 1.0 / (Dh ** 0.5)
    for n in range(N):  # sequence position n: cond (n = 0) or token n-1; predicts token n
        rope = model.rope[n:n + 1].unsqueeze(0)  # [1,1,Dh/2,2]
        for li, layer in enumerate(model.layers):
            a = layer.attention
            q, k, v = a.wqkv(layer.attention_norm(x)).split(cfg.dim, dim=-1)
            q = apply_rope(q.view(R, 1, H, Dh), rope).transpose(1, 2)  # [R,H,1,Dh]
            kc[li][:, :, n] = apply_rope(k.view(R, 1, H, Dh), rope)[:, 0]
            vc[li][:, :, n] = v.view(R, H, Dh)
            att = (q @ kc[li][:, :, :n + 1].transpose(-2, -1)) * scale
            y = (att.softmax(-1) @ vc[li][:, :, :n + 1]).transpose(1, 2).reshape(R, 1, cfg.dim)
            h = x + a.wo(y)
            x = h + layer.feed_forward(layer.ffn_norm(h))
        hn = model.norm(x)[:, -1]
        if want_hidden:
            hid[:, n] = hn[:B]
        out[:, n], x = model.sample_next(model.output(hn).float(), cfg_scale, temperature, top_k, top_p, generator)
    return out, hid


def chunk_seed(seed, split, c):
    return seed + c + (TEST_SEED_OFFSET if split == "test" else 0)


def load_distill_set(out_dir, split, limit=None):
    """(tokens long [M,N], labels long [M]) from every <split>_*.npz chunk, in chunk order."""
    files = sorted(glob.glob(os.path.join(out_dir, f"{split}_*.npz")))
    if not files:
        raise SystemExit(f"no {split} chunks in {out_dir}: run tools/ssd_distill_set.py first")
    toks, labs = [], []
    for f in files:
        d = np.load(f)
        toks.append(d["tokens"].astype(np.int64))
        labs.append(d["labels"].astype(np.int64))
        if limit is not None and sum(len(t) for t in toks) >= limit:
            break
    tok, lab = torch.from_numpy(np.concatenate(toks)), torch.from_numpy(np.concatenate(labs))
    return (tok[:limit], lab[:limit]) if limit is not None else (tok, lab)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="fmnist_gpt16")
    ap.add_argument("--split", choices=["train", "test"], default="train")
    ap.add_argument("--images", type=int, default=2000, help="total for this split (rounded up to chunks)")
    ap.add_argument("--chunk", type=int, default=50, help="images per chunk file (= sampling batch)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(C.RUNS, "ssd_distill"))
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--save-hidden", action="store_true", help="also store hidden f16 (dim*2 bytes per token)")
    ap.add_argument("--cfg", type=float, default=None, help="override the asset's default")
    ap.add_argument("--temperature", type=float, default=None, help="override the asset's default")
    ap.add_argument("--max-wall-min", type=float, default=None,
                    help="start no new chunk after this many minutes (run again to continue)")
    ap.add_argument("--check", action="store_true",
                    help="compare one small batch against GPT.generate and exit")
    args = ap.parse_args()
    C.set_threads()
    model, meta = load_gpt(os.path.join(args.assets_dir, args.base + ".safetensors"))
    samp = sampler_from_meta(meta)
    if args.cfg is not None:
        samp["cfg_scale"] = args.cfg
    if args.temperature is not None:
        samp["temperature"] = args.temperature
    N = model.cfg.block_size

    if args.check:
        lab = torch.arange(4) % 10
        t0 = time.process_time()
        ref = model.generate(lab, generator=torch.Generator().manual_seed(7), **samp)
        t1 = time.process_time()
        got, _ = sample(model, lab, generator=torch.Generator().manual_seed(7), **samp)
        t2 = time.process_time()
        agree = (ref == got).float().mean().item()
        print(f"check: tokens agreeing with GPT.generate {agree:.4f}; CPU s GPT.generate "
              f"{t1 - t0:.1f}, sample {t2 - t1:.1f}")
        raise SystemExit(0 if agree > 0.95 else 1)

    os.makedirs(args.out, exist_ok=True)
    log = C.Log(os.path.join(args.out, "gen.log"))
    n_chunks = (args.images + args.chunk - 1) // args.chunk
    log(f"{args.split}: {n_chunks} chunks of {args.chunk} from {args.base} sampler {samp} "
        f"seed {args.seed} -> {args.out}")
    done, t_start = 0, time.time()
    for c in range(n_chunks):
        if args.max_wall_min is not None and time.time() - t_start > 60 * args.max_wall_min:
            log(f"{args.split}: stopping at the wall cap ({args.max_wall_min} min); run again to continue")
            break
        path = os.path.join(args.out, f"{args.split}_{c:05d}.npz")
        if os.path.exists(path):
            continue
        seed = chunk_seed(args.seed, args.split, c)
        lab = torch.arange(args.chunk) % model.cfg.num_classes
        t0, c0 = time.time(), time.process_time()
        tok, hid = sample(model, lab, generator=torch.Generator().manual_seed(seed),
                          want_hidden=args.save_hidden, **samp)
        wall, cpu = time.time() - t0, time.process_time() - c0
        arrs = dict(tokens=tok.numpy().astype(np.int16), labels=lab.numpy(),
                    seeds=np.full(args.chunk, seed, np.int64))
        if hid is not None:
            arrs["hidden"] = hid.half().numpy()
        tmp = path + ".tmp.npz"
        np.savez(tmp, **arrs)
        os.replace(tmp, path)
        done += 1
        log(f"chunk {c + 1}/{n_chunks}: {args.chunk / wall:.3f} images/s wall, "
            f"{cpu / args.chunk:.3f} CPU s/image ({torch.get_num_threads()} threads)")
    have = len(glob.glob(os.path.join(args.out, f"{args.split}_*.npz")))
    log(f"{args.split}: {done} new chunks, {have} chunks ({have * args.chunk} images) in {args.out}, "
        f"{N} tokens per image")


if __name__ == "__main__":
    main()
