"""Stage 4: train a class-conditional LlamaGen GPT on the token grids from encode_dataset.py.

Presets (any field can be overridden on the command line):
  gpt16      main model, 16x16 tokens
  gpt8       low-resolution model, 8x8 tokens of 16x16-pooled images, same width/depth
  gpt4       low-resolution model for MuLo-SD's r = 4: 4x4 tokens of 8x8-pooled images
  drafter16  small 2-layer GPT on the 16x16 grid, a draft model for speculative decoding
AdamW + linear warmup + cosine; class dropout 0.1 (null class = num_classes) for CFG.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

import common as C
import fid
from encode_dataset import load_vq
from safetensors_io import load_file, save_file
from vkspec_models import Classifier, GPT, GPTConfig, gpt_metadata

PRESETS = {
    "gpt16": dict(name="fmnist_gpt16", grid=16, dim=256, n_layer=6, batch=32, steps=3000,
                  budget_min=90, lr=1e-3, role="target"),
    "gpt8": dict(name="fmnist_gpt8", grid=8, dim=256, n_layer=6, batch=64, steps=2500,
                 budget_min=26, lr=1e-3, role="target-lowres"),
    # 17-position sequences: a step costs about a quarter of gpt8's, so a bigger batch
    "gpt4": dict(name="fmnist_gpt4", grid=4, dim=256, n_layer=6, batch=128, steps=1500,
                 budget_min=15, lr=1e-3, role="target-lowres"),
    "drafter16": dict(name="fmnist_drafter16", grid=16, dim=256, n_layer=2, batch=32,
                      steps=2500, budget_min=22, lr=1.5e-3, role="drafter"),
}


def load_tokens(grid, split, runs_dir):
    tok = np.load(os.path.join(runs_dir, f"tokens_{grid}_{split}.npy")).astype(np.int64)
    lab = np.load(os.path.join(runs_dir, f"labels_{split}.npy"))
    return torch.from_numpy(tok.reshape(len(tok), -1)), torch.from_numpy(lab)


@torch.no_grad()
def val_loss(model, tok, lab, n=2000, bs=100):
    n = min(n, len(tok))
    model.eval()
    tot = 0.0
    for i in range(0, n, bs):
        logits, _ = model(tok[i:i + bs], lab[i:i + bs])
        tot += F.cross_entropy(logits.flatten(0, 1), tok[i:i + bs].flatten(), reduction="sum").item()
    model.train()
    return tot / (n * tok.shape[1])


@torch.no_grad()
def sample_images(model, vq, labels, cfg_scale, seed, bs=250, **kw):
    g = torch.Generator().manual_seed(seed)
    W = model.cfg.grid_size
    out = []
    for i in range(0, len(labels), bs):
        tok = model.generate(labels[i:i + bs], cfg_scale=cfg_scale, generator=g, **kw)
        out.append(vq.decode_code(tok.view(-1, W, W)).clamp(-1, 1))
    return torch.cat(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", choices=PRESETS, default="gpt16")
    for k in ("name", "grid", "dim", "n_layer", "batch", "steps", "budget_min", "lr", "role"):
        ap.add_argument("--" + k.replace("_", "-"), type=type(PRESETS["gpt16"][k]), default=None)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--ckpt-every-s", type=float, default=300)
    ap.add_argument("--n-eval-samples", type=int, default=300, help="per cfg value, for FID")
    ap.add_argument("--cfg-grid", default="1.0,2.0,4.0")
    ap.add_argument("--runs-dir", default=C.RUNS, help="where tokens_*.npy and fid stats live")
    ap.add_argument("--wall-cap-min", type=float, default=None,
                    help="hard wall-clock stop (default 4x budget)")
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--measure", type=int, default=0, help="time N steps and exit")
    args = ap.parse_args()
    for k, v in PRESETS[args.preset].items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    C.set_threads()
    torch.manual_seed(0)

    vocab = int(load_file(os.path.join(args.assets_dir, "fmnist_vq.safetensors"))[1]["codebook_size"]) \
        if os.path.exists(os.path.join(args.assets_dir, "fmnist_vq.safetensors")) else 1024
    cfg = GPTConfig(dim=args.dim, n_layer=args.n_layer, n_head=args.dim // args.head_dim,
                    vocab_size=vocab, num_classes=10, grid_size=args.grid)
    model = GPT(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    run = C.Run(args.name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(model, opt)
    nparam = sum(p.numel() for p in model.parameters())
    run.log(f"{args.preset}: params {nparam / 1e6:.2f}M cfg {cfg} ffn {cfg.ffn_hidden} "
            f"batch {args.batch} steps {args.steps} budget {args.budget_min} min")

    tok_tr, lab_tr = load_tokens(args.grid, "train", args.runs_dir)
    tok_te, lab_te = load_tokens(args.grid, "test", args.runs_dir)
    t_last, steps_last, t_start = time.time(), run.step, time.time()
    model.train()
    while not run.done():
        i, _ = C.step_batch(run.step, len(tok_tr), args.batch)
        tok, lab = tok_tr[i], lab_tr[i]
        lr = C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
        logits, _ = model(tok, lab)
        loss = F.cross_entropy(logits.flatten(0, 1), tok.flatten())
        C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        save = run.tick()
        if args.measure and run.step - steps_last >= args.measure:
            print(f"{(time.time() - t_start) / args.measure:.3f} s/step")
            return
        if run.step % 25 == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} lr {lr:.2e} {sps:.2f} s/step "
                    f"{args.batch * tok.shape[1] / sps:.0f} tok/s progress {run.progress():.3f}")
            t_last, steps_last = time.time(), run.step
        if run.step % 500 == 0:
            run.log(f"step {run.step} val loss {val_loss(model, tok_te, lab_te, n=500):.4f}")
        if save:
            run.save(model, opt)
    run.save(model, opt)
    export(args, run, model, tok_te, lab_te)


def export(args, run, model, tok_te, lab_te):
    model.eval()
    vl = val_loss(model, tok_te, lab_te, n=1000)
    run.log(f"final val loss {vl:.4f} (1000 test images)")
    state = C.fp16_export(model.state_dict())
    m16 = GPT(model.cfg)
    m16.load_state_dict({k: v.float() for k, v in state.items()})
    vl16 = val_loss(m16, tok_te, lab_te, n=200)
    vl32 = val_loss(model, tok_te, lab_te, n=200)

    vq = load_vq(os.path.join(args.assets_dir, "fmnist_vq.safetensors"))
    clf_path = os.path.join(args.assets_dir, "fmnist_classifier.safetensors")
    stats_path = os.path.join(args.runs_dir, f"fid_stats_{2 * args.grid}.npz")
    to32 = (lambda x: x) if args.grid == 16 else fid.lowres_to_32
    results, best = [], (None, 2.0)
    if os.path.exists(clf_path):
        clf = Classifier()
        clf.load_state_dict(load_file(clf_path)[0])
        clf.eval()
        if not os.path.exists(stats_path):
            fid.write_reference_stats(clf, 2 * args.grid, stats_path)
        ref = fid.load_stats(stats_path)
        labels = torch.arange(args.n_eval_samples) % 10
        for s in [float(v) for v in args.cfg_grid.split(",")]:
            t0 = time.time()
            x = to32(sample_images(model, vq, labels, s, seed=1))
            f = fid.frechet(*fid.stats(fid.features(clf, x)), *ref)
            with torch.no_grad():
                acc = (clf(x).argmax(-1) == labels).float().mean().item()
            results.append((s, f, acc, time.time() - t0))
            run.log(f"cfg {s}: FID {f:.3f} class-consistency {acc:.3f} ({time.time() - t0:.0f} s)")
            if best[0] is None or f < best[0]:
                best = (f, s)
    cfg_default = best[1]

    os.makedirs(args.assets_dir, exist_ok=True)
    base = os.path.join(args.assets_dir, args.name)
    meta = gpt_metadata(model.cfg)
    meta.update({"role": args.role, "tokenizer": "fmnist_vq", "image_size": str(2 * args.grid),
                 "cfg": str(cfg_default), "temperature": "1.0", "top_k": "0", "top_p": "1.0",
                 "val_loss": f"{vl:.4f}"})

    labels = torch.arange(10).repeat_interleave(8)
    x = sample_images(model, vq, labels, cfg_default, seed=2)
    imgs = C.from_unit(x[:, 0]).reshape(10, 8, *x.shape[2:]).transpose(1, 0, 2, 3).reshape(80, *x.shape[2:])
    C.write_png(base + "_samples.png", C.grid_image(imgs, 10, scale=2 if args.grid == 16 else 4))
    table = "| cfg | FID (classifier features) | class-consistency | seconds |\n|---|---|---|---|\n"
    table += "\n".join(f"| {s} | {f:.3f} | {a:.3f} | {t:.0f} |" for s, f, a, t in results)
    C.write_card(base + ".md", f"{args.name}: class-conditional LlamaGen GPT ({args.role})", [
        ("What", f"LlamaGen c2i transformer (tools/vkspec_models.py `GPT`): {model.cfg.n_layer} "
                 f"layers, dim {model.cfg.dim}, {model.cfg.n_head} heads of {model.cfg.head_dim}, "
                 f"FFN {model.cfg.ffn_hidden}, vocab {model.cfg.vocab_size} (`fmnist_vq` codes), "
                 f"{args.grid}x{args.grid} tokens -> {2 * args.grid}x{2 * args.grid} pixels, "
                 f"10 Fashion-MNIST classes + null class {model.cfg.num_classes} for CFG. "
                 f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters."),
        ("Training", f"`{C.cmdline()}`\n\nBatch {args.batch}, peak lr {args.lr}, "
                     f"{run.summary()} on 2 shared CPU cores."),
        ("Results", f"- test token cross-entropy (1000 images): {vl:.4f} nats\n"
                    f"- f16 weights vs f32 on 200 images: {vl16:.4f} vs {vl32:.4f}\n"
                    f"- default sampler: cfg {cfg_default}, temperature 1.0, no top-k/top-p "
                    f"(lowest FID below)\n\n{table if results else '(no classifier yet)'}\n\n"
                    f"FID uses {args.n_eval_samples} samples per row against the 10k test set "
                    "in fmnist_classifier feature space; only comparable within this project."),
        ("Samples", f"`{args.name}_samples.png`: one column per class (0..9 left to right), "
                    "8 samples each, default sampler, seed 2."),
        ("Dtypes", "matrices and embeddings F16; RMSNorm weights F32."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    save_file(state, base + ".safetensors", meta)  # last: its existence marks the stage done
    run.log(f"exported {base}.safetensors")


if __name__ == "__main__":
    main()
