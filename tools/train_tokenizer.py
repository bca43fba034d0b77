"""Stage 1: train the small LlamaGen-style VQ tokenizer on Fashion-MNIST (32x32 -> 16x16 tokens).

Also trains on 2x average-pooled 16x16 images (every `--low-every`-th step) so the SAME
tokenizer maps 16x16 images to 8x8 tokens for the low-resolution GPT.
Loss: L1 + L2 reconstruction + codebook + beta*commitment. Codes unused for `--restart-every`
steps are restarted from random (normalised) encoder outputs of the current batch.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

import common as C
from safetensors_io import save_file
from vkspec_models import VQConfig, VQModel, vq_metadata


def psnr(a, b):
    """Per-image PSNR on [0,1]-scaled images, averaged."""
    mse = (((a.clamp(-1, 1) - b) / 2) ** 2).flatten(1).mean(1)
    return (10 * torch.log10(1.0 / mse.clamp_min(1e-10))).mean().item()


@torch.no_grad()
def evaluate(model, x_test, n=1000, bs=250):
    model.eval()
    res = {}
    for tag, down in (("32", False), ("16", True)):
        ps, used = [], torch.zeros(model.cfg.codebook_size, dtype=torch.bool)
        for i in range(0, n, bs):
            x = x_test[i:i + bs]
            if down:
                x = F.avg_pool2d(x, 2)
            rec, _, idx, _ = model(x)
            ps.append(psnr(rec, x))
            used[idx.flatten()] = True
        res[f"psnr_{tag}"] = float(np.mean(ps))
        res[f"usage_{tag}"] = used.float().mean().item()
    model.train()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="fmnist_vq")
    ap.add_argument("--steps", type=int, default=2500)
    ap.add_argument("--budget-min", type=float, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--ch", type=int, default=32)
    ap.add_argument("--z", type=int, default=64)
    ap.add_argument("--codebook", type=int, default=1024)
    ap.add_argument("--embed-dim", type=int, default=8)
    ap.add_argument("--res-blocks", type=int, default=1)
    ap.add_argument("--low-every", type=int, default=4)
    ap.add_argument("--restart-every", type=int, default=200)
    ap.add_argument("--ckpt-every-s", type=float, default=180)
    ap.add_argument("--wall-cap-min", type=float, default=None,
                    help="hard wall-clock stop (default 4x budget)")
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    args = ap.parse_args()
    C.set_threads()
    torch.manual_seed(0)

    cfg = VQConfig(ch=args.ch, ch_mult=[1, 2], z_channels=args.z, codebook_size=args.codebook,
                   codebook_embed_dim=args.embed_dim, num_res_blocks=args.res_blocks)
    model = VQModel(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    run = C.Run(args.name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(model, opt)
    run.log(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M cfg {cfg}")

    xtr, _ = C.load_fmnist("train")
    xte, _ = C.load_fmnist("test")
    x_train, x_test = C.to_unit(xtr), C.to_unit(xte)
    counts = torch.zeros(cfg.codebook_size)
    t_last, steps_last = time.time(), run.step
    model.train()
    while not run.done():
        i, g = C.step_batch(run.step, len(x_train), args.batch)
        x = x_train[i]
        if args.low_every and run.step % args.low_every == args.low_every - 1:
            x = F.avg_pool2d(x, 2)
        lr = C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
        rec, vq_loss, idx, zf = model(x)
        rec_loss = (rec - x).abs().mean() + ((rec - x) ** 2).mean()
        loss = rec_loss + vq_loss
        C.descend(opt, loss)
        counts += torch.bincount(idx.flatten(), minlength=cfg.codebook_size).float()

        if (run.step + 1) % args.restart_every == 0:
            dead = (counts == 0).nonzero().flatten()
            if len(dead):
                src = zf.detach()[torch.randint(0, len(zf), (len(dead),), generator=g)]
                with torch.no_grad():
                    model.quantize.embedding.weight[dead] = F.normalize(
                        src + 0.01 * torch.randn_like(src), dim=-1)
                st = opt.state.get(model.quantize.embedding.weight)
                if st:  # stale Adam moments would drag the fresh codes straight back
                    st["exp_avg"][dead] = 0
                    st["exp_avg_sq"][dead] = 0
            run.log(f"step {run.step + 1} codebook used {(counts > 0).float().mean():.3f}, "
                    f"restarted {len(dead)}")
            counts.zero_()

        save = run.tick()
        if run.step % 50 == 0:
            dt = time.time() - t_last
            sps = dt / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} rec {rec_loss.item():.4f} "
                    f"vq {vq_loss.item():.4f} lr {lr:.2e} {sps:.3f} s/step "
                    f"progress {run.progress():.3f}")
            t_last, steps_last = time.time(), run.step
        if save:
            run.save(model, opt)
    run.save(model, opt)
    export(args, run, model, x_test)


def export(args, run, model, x_test):
    ev = evaluate(model, x_test)
    run.log(f"final eval {ev}")
    os.makedirs(args.assets_dir, exist_ok=True)
    base = os.path.join(args.assets_dir, args.name)
    meta = vq_metadata(model.cfg)
    meta.update({"image_size": "32", "pixel_range": "-1,1", "dataset": "fashion-mnist",
                 "psnr_test_32": f"{ev['psnr_32']:.2f}", "psnr_test_16": f"{ev['psnr_16']:.2f}"})
    state = C.fp16_export(model.state_dict(),
                          keep_f32=lambda k, t: t.dim() < 2 or k.startswith("quantize."))
    # check the f16 weights cost nothing measurable before shipping them
    m16 = VQModel(model.cfg)
    m16.load_state_dict({k: v.float() for k, v in state.items()})
    ev16 = evaluate(m16, x_test, n=500)

    with torch.no_grad():
        model.eval()
        x = x_test[:16]
        r32 = model(x)[0]
        x16 = F.avg_pool2d(x, 2)
        r16 = F.interpolate(model(x16)[0], scale_factor=2.0, mode="nearest")
        x16u = F.interpolate(x16, scale_factor=2.0, mode="nearest")
    rows = torch.cat([x, r32, x16u, r16])[:, 0]
    C.write_png(base + "_samples.png", C.grid_image(C.from_unit(rows), 16, scale=2))
    C.write_card(base + ".md", f"{args.name}: VQ tokenizer for Fashion-MNIST", [
        ("What", "LlamaGen VQModel architecture (tools/vkspec_models.py `VQModel`), 1 grayscale "
                 "channel, 32x32 pixels in [-1,1] -> 16x16 tokens (downsample 2); 16x16 pixels "
                 "(2x2 average-pooled) -> 8x8 tokens with the same weights. L2-normalised "
                 f"codebook {model.cfg.codebook_size} x {model.cfg.codebook_embed_dim}."),
        ("Training", f"`{C.cmdline()}`\n\nBatch {args.batch}, {run.summary()} "
                     f"on 2 shared CPU cores. L1+L2 reconstruction, "
                     "codebook + 0.25 commitment loss, dead-code restarts from encoder outputs."),
        ("Results (first 1000 test images; f16 check on 500)",
         f"- PSNR 32x32: {ev['psnr_32']:.2f} dB (f16 weights: {ev16['psnr_32']:.2f} dB)\n"
         f"- PSNR 16x16: {ev['psnr_16']:.2f} dB (f16 weights: {ev16['psnr_16']:.2f} dB)\n"
         f"- codebook usage: {ev['usage_32']:.3f} (32x32), {ev['usage_16']:.3f} (16x16)"),
        ("Samples", f"`{args.name}_samples.png`: rows = test images, 32x32 reconstructions, "
                    "16x16 inputs, 16x16 reconstructions (2x nearest upscale for display)."),
        ("Dtypes", "conv weights F16; biases, GroupNorm and `quantize.embedding.weight` F32."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    save_file(state, base + ".safetensors", meta)  # last: its existence marks the stage done
    run.log(f"exported {base}.safetensors")


if __name__ == "__main__":
    main()
