"""Train MuLo-SD's pixel-space super-resolution net (tools/vkspec_models.py `SRNet`), x2 or x4.

The paper's pixel-space upsampler decodes the low-resolution draft, runs an off-the-shelf
super-resolution model and re-encodes. No such model is reachable offline, so this trains a
small ESPCN-style one on the dataset: input = the 32x32 training image average-pooled by the
scale (how encode_dataset.py made the low-resolution model's tokens), target = the image.
Loss: pixel MSE. AdamW + warmup + cosine (common.lr_at), resumable from train_runs/<name>/.

Held-out evaluation (first --n-eval test images): PSNR of SR vs nearest upsampling in pixels,
and through the whole token path the decoder uses (VQ-decode the low-resolution tokens of
encode_dataset.py, upsample, VQ-encode): agreement with the real high-resolution tokens and
PSNR of their decoding against the original image. Writes assets/<name>.{safetensors,md}.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

import common as C
from encode_dataset import load_vq
from safetensors_io import save_file
from vkspec_models import SRNet, sr_metadata


def psnr(a, b):
    """Mean per-image PSNR of images in [-1,1] (peak-to-peak 2)."""
    mse = ((a.clamp(-1, 1) - b) ** 2).flatten(1).mean(1).clamp_min(1e-10)
    return (10 * torch.log10(4.0 / mse)).mean().item()


@torch.no_grad()
def token_path(vq, up, low_tok, bs=250):
    """low tokens [N,w,w] -> decode -> up -> encode: high tokens [N,W,W]."""
    out = []
    for i in range(0, len(low_tok), bs):
        px = vq.decode_code(low_tok[i:i + bs])
        out.append(vq.encode(up(px))[2])
    return torch.cat(out)


@torch.no_grad()
def evaluate(net, vq, x, low_tok, high_tok):
    net.eval()
    s = net.scale
    lo = F.avg_pool2d(x, s)
    nearest = lambda v: F.interpolate(v, scale_factor=float(s), mode="nearest")
    res = {"psnr_px_sr": psnr(net(lo), x), "psnr_px_nearest": psnr(nearest(lo), x)}
    for tag, up in (("sr", net), ("nearest", nearest)):
        tok = token_path(vq, up, low_tok)
        res[f"token_match_{tag}"] = (tok == high_tok).float().mean().item()
        res[f"psnr_tokens_{tag}"] = psnr(vq.decode_code(tok), x)
    net.train()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, choices=(2, 4), default=2)
    ap.add_argument("--channels", type=int, default=32)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--budget-min", type=float, default=8)
    ap.add_argument("--wall-cap-min", type=float, default=40)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--n-eval", type=int, default=1000)
    ap.add_argument("--name", default=None, help="default fmnist_sr<scale>")
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--runs-dir", default=C.RUNS)
    args = ap.parse_args()
    args.name = args.name or f"fmnist_sr{args.scale}"
    C.set_threads()
    torch.manual_seed(0)

    net = SRNet(args.scale, args.channels, args.depth)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=0.0)
    run = C.Run(args.name, args.steps, args.budget_min, 120, wall_cap_min=args.wall_cap_min)
    run.resume(net, opt)
    nparam = sum(p.numel() for p in net.parameters())
    run.log(f"SRNet x{args.scale} ch {args.channels} depth {args.depth}: {nparam} params, "
            f"batch {args.batch}, steps {args.steps}, budget {args.budget_min} min")
    x_tr = C.to_unit(C.load_fmnist("train")[0])
    net.train()
    losses = run.extra.setdefault("losses", [])
    while not run.done():
        i, g = C.step_batch(run.step, len(x_tr), args.batch)
        x = x_tr[i]
        if torch.rand(1, generator=g).item() < 0.5:
            x = x.flip(-1)
        lr = C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
        loss = F.mse_loss(net(F.avg_pool2d(x, args.scale)), x)
        C.descend(opt, loss)
        save = run.tick()
        if run.step % 50 == 0:
            losses.append((run.step, loss.item()))
            run.log(f"step {run.step} mse {loss.item():.5f} lr {lr:.2e} progress {run.progress():.3f}")
        if save:
            run.save(net, opt)
    run.save(net, opt)
    export(args, run, net)


def export(args, run, net):
    vq = load_vq(os.path.join(args.assets_dir, "fmnist_vq.safetensors"))
    n = args.n_eval
    x = C.to_unit(C.load_fmnist("test")[0][:n])
    lowg = {2: 8, 4: 4}[args.scale]
    low_tok = torch.from_numpy(np.load(os.path.join(args.runs_dir, f"tokens_{lowg}_test.npy"))[:n].astype(np.int64))
    high_tok = torch.from_numpy(np.load(os.path.join(args.runs_dir, "tokens_16_test.npy"))[:n].astype(np.int64))
    res = evaluate(net, vq, x, low_tok, high_tok)
    run.log("eval " + json.dumps(res))
    C.json_dump(os.path.join(run.dir, "eval.json"), res)
    meta = sr_metadata(net)
    meta.update({k: f"{v:.4f}" for k, v in res.items()})
    base = os.path.join(args.assets_dir, args.name)
    losses = run.extra.get("losses", [])
    curve = ", ".join(f"{s}: {l:.5f}" for s, l in losses[::max(1, len(losses) // 8)] + [l for l in losses[-1:] if l not in losses[::max(1, len(losses) // 8)]])
    C.write_card(base + ".md", f"{args.name}: pixel super-resolution x{args.scale} for MuLo-SD", [
        ("What", f"ESPCN-style net (tools/vkspec_models.py `SRNet`): {args.depth} 3x3 convs "
                 f"({args.channels} channels, SiLU), pixel shuffle x{args.scale}, added to nearest "
                 f"upsampling. {sum(p.numel() for p in net.parameters())} parameters. `mulo "
                 f"--upsampler pixel-sr` runs it between VQ-decoding the low-resolution draft and "
                 "re-encoding it (engine/model/sr_net.*, decoding/upsampler.cpp). The paper uses an off-the-shelf "
                 "super-resolution model there; none is reachable offline, so this small net "
                 "trained on Fashion-MNIST stands in for it."),
        ("Training", f"`{C.cmdline()}`\n\nData: the 60k training images (32x32, random "
                     f"horizontal flips), input average-pooled {args.scale}x{args.scale} (as "
                     f"tools/encode_dataset.py pools for the low-resolution models), target the "
                     f"image. Loss: pixel MSE. Batch {args.batch}, peak lr {args.lr}, "
                     f"{run.summary()} on 2 shared CPU cores.\n\nTraining MSE by step: {curve}"),
        ("Results (first %d test images)" % n,
         f"| path | SR net | nearest |\n|---|---|---|\n"
         f"| pixels: PSNR of the upsampled pooled image (dB) | {res['psnr_px_sr']:.2f} | {res['psnr_px_nearest']:.2f} |\n"
         f"| tokens: VQ-decode low tokens, upsample, VQ-encode: match with the real high-res tokens | {res['token_match_sr']:.3f} | {res['token_match_nearest']:.3f} |\n"
         f"| tokens: PSNR of those tokens decoded vs the image (dB) | {res['psnr_tokens_sr']:.2f} | {res['psnr_tokens_nearest']:.2f} |"),
        ("Dtypes", "all F32 (23k parameters: f16 would save nothing that matters)."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    state = {k: v.float().contiguous() for k, v in net.state_dict().items()}
    save_file(state, base + ".safetensors", meta)  # last: its existence marks the stage done
    run.log(f"exported {base}.safetensors")


if __name__ == "__main__":
    main()
