"""Train MuLo-SD's latent-space upsampler U_r (tools/vkspec_models.py `LatentUpsampler`).

U_r maps a low-resolution token grid (w x w) to a high-resolution latent grid (r w x r w, the
VQ's code dimension) through masked row-causal 3x3 convs and a pixel shuffle; the latents are
quantised to the frozen VQ codebook (nearest normalised code, straight-through gradient) and
decoded by the frozen VQ decoder. As in the paper, the loss is in pixels:
  pixel MSE(decode(q(U(y))), x)
  + --perc-weight * perceptual distance (LPIPS-style: unit-normalised feature maps of the frozen
    shipped classifier assets/fmnist_classifier, conv1b/conv2b/conv3a, squared difference;
    LPIPS itself needs ImageNet-trained nets that are not available offline)
  + --gan-weight * hinge generator loss of a small PatchGAN (vkspec_models.PatchDiscriminator,
    trained alongside with the hinge loss), switched on after --gan-start of the schedule
  + --commit-weight * |U(y)/|U(y)| - q|^2 (keeps the latents near codes, the VQ's own term)
  + a warm start: --latent-weight * |U(y)/|U(y)| - e(x's real token)|^2, decayed linearly to 0
    by --latent-until of the schedule (random init through an argmax is slow to find codes).
Data: y = tokens_<w>_train.npy (the real images pooled r x r and VQ-encoded, encode_dataset.py),
x = the 32x32 image. Held-out evaluation on the first --n-eval test images against the nearest
pixel path (decode, nearest r x, encode): token match with the real high-res tokens, PSNR of
the decoded result, classifier-feature distance. Writes assets/<name>.{safetensors,md}.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

import common as C
from encode_dataset import load_vq
from safetensors_io import load_file, save_file
from train_sr_net import psnr, token_path
from vkspec_models import Classifier, LatentUpsampler, PatchDiscriminator, latent_upsampler_metadata


def clf_feature_maps(clf, x):
    a = F.relu(clf.conv1b(F.relu(clf.conv1a(x))))
    b = F.relu(clf.conv2b(F.relu(clf.conv2a(F.max_pool2d(a, 2)))))
    c = F.relu(clf.conv3a(F.max_pool2d(b, 2)))
    return a, b, c


def perceptual(clf, x, y):
    """LPIPS-style: per-layer channel-unit-normalised maps, squared difference, spatial mean."""
    d = 0.0
    for fx, fy in zip(clf_feature_maps(clf, x), clf_feature_maps(clf, y)):
        fx = fx / (fx.norm(dim=1, keepdim=True) + 1e-8)
        fy = fy / (fy.norm(dim=1, keepdim=True) + 1e-8)
        d = d + ((fx - fy) ** 2).sum(1).mean((1, 2))
    return d.mean()


def quantise(vq, z):
    """z [B,C,H,W] -> (straight-through codes, normalised z, ids [B,H,W])."""
    zn = F.normalize(z, dim=1)
    e = vq.quantize.codebook()
    idx = torch.einsum("bchw,nc->bhwn", zn, e).argmax(-1)
    zq = e[idx].permute(0, 3, 1, 2)
    return zn + (zq - zn).detach(), zn, idx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ratio", type=int, choices=(2, 4), default=2)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--budget-min", type=float, default=25)
    ap.add_argument("--wall-cap-min", type=float, default=70)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--perc-weight", type=float, default=0.1)
    ap.add_argument("--gan-weight", type=float, default=0.02)
    ap.add_argument("--gan-start", type=float, default=0.3)
    ap.add_argument("--commit-weight", type=float, default=0.25)
    ap.add_argument("--latent-weight", type=float, default=1.0)
    ap.add_argument("--latent-until", type=float, default=0.3)
    ap.add_argument("--n-eval", type=int, default=1000)
    ap.add_argument("--name", default=None, help="default fmnist_latent_up<ratio>")
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--runs-dir", default=C.RUNS)
    args = ap.parse_args()
    args.name = args.name or f"fmnist_latent_up{args.ratio}"
    C.set_threads()
    torch.manual_seed(0)

    vq = load_vq(os.path.join(args.assets_dir, "fmnist_vq.safetensors")).requires_grad_(False)
    clf = Classifier()
    clf.load_state_dict(load_file(os.path.join(args.assets_dir, "fmnist_classifier.safetensors"))[0])
    clf.eval().requires_grad_(False)
    w = 16 // args.ratio
    net = LatentUpsampler(vq.cfg.codebook_size, vq.cfg.codebook_embed_dim, args.ratio, args.channels,
                          args.depth)
    disc = PatchDiscriminator()

    class Both(torch.nn.Module):  # one state dict / optimizer pair for Run's checkpoint
        def __init__(self):
            super().__init__()
            self.net, self.disc = net, disc

    both = Both()
    opt_g = torch.optim.AdamW(net.parameters(), lr=args.lr, betas=(0.5, 0.9), weight_decay=0.0)
    opt_d = torch.optim.AdamW(disc.parameters(), lr=args.lr, betas=(0.5, 0.9), weight_decay=0.0)

    class Opts:  # Run saves one optimizer state
        def state_dict(self):
            return {"g": opt_g.state_dict(), "d": opt_d.state_dict()}

        def load_state_dict(self, s):
            opt_g.load_state_dict(s["g"])
            opt_d.load_state_dict(s["d"])

    opts = Opts()
    run = C.Run(args.name, args.steps, args.budget_min, 180, wall_cap_min=args.wall_cap_min)
    run.resume(both, opts)
    run.log(f"LatentUpsampler r {args.ratio} ch {args.channels} depth {args.depth}: "
            f"{sum(p.numel() for p in net.parameters())} params; disc "
            f"{sum(p.numel() for p in disc.parameters())}; batch {args.batch} steps {args.steps} "
            f"budget {args.budget_min} min; {vars(args)}")
    x_tr = C.to_unit(C.load_fmnist("train")[0])
    y_tr = torch.from_numpy(np.load(os.path.join(args.runs_dir, f"tokens_{w}_train.npy")).astype(np.int64))
    t_tr = torch.from_numpy(np.load(os.path.join(args.runs_dir, "tokens_16_train.npy")).astype(np.int64))
    e = vq.quantize.codebook()
    hist = run.extra.setdefault("losses", [])
    net.train()
    while not run.done():
        i, _ = C.step_batch(run.step, len(x_tr), args.batch)
        x, y, t = x_tr[i], y_tr[i], t_tr[i]
        prog = run.progress()
        lr = C.lr_at(prog, args.lr, 0.03)
        for o in (opt_g, opt_d):
            C.set_lr(o, lr)
        zst, zn, _ = quantise(vq, net(y))
        img = vq.decode(zst)
        mse = F.mse_loss(img, x)
        perc = perceptual(clf, img, x)
        commit = ((zn - zst.detach()) ** 2).sum(1).mean()
        lat_w = args.latent_weight * max(0.0, 1.0 - prog / args.latent_until) if args.latent_until > 0 else 0.0
        latent = ((zn - e[t].permute(0, 3, 1, 2)) ** 2).sum(1).mean()
        gan_on = prog >= args.gan_start
        adv = -disc(img).mean() if gan_on else torch.zeros(())
        loss = mse + args.perc_weight * perc + args.commit_weight * commit + lat_w * latent + \
            (args.gan_weight * adv if gan_on else 0.0)
        C.descend(opt_g, loss, lambda: torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0))
        d_loss = torch.zeros(())
        if gan_on:  # hinge loss on real images vs the decoded upsampled drafts
            d_loss = F.relu(1 - disc(x)).mean() + F.relu(1 + disc(img.detach())).mean()
            C.descend(opt_d, d_loss)
        save = run.tick()
        if run.step % 25 == 0:
            hist.append((run.step, mse.item(), perc.item(), adv.item(), d_loss.item()))
            run.log(f"step {run.step} mse {mse.item():.4f} perc {perc.item():.4f} commit "
                    f"{commit.item():.4f} latent {latent.item():.4f} (w {lat_w:.2f}) adv "
                    f"{adv.item():.3f} d {d_loss.item():.3f} lr {lr:.2e} progress {prog:.3f}")
        if save:
            run.save(both, opts)
    run.save(both, opts)
    export(args, run, net, vq, clf)


@torch.no_grad()
def evaluate(net, vq, clf, ratio, n, runs_dir):
    net.eval()
    w = 16 // ratio
    x = C.to_unit(C.load_fmnist("test")[0][:n])
    y = torch.from_numpy(np.load(os.path.join(runs_dir, f"tokens_{w}_test.npy"))[:n].astype(np.int64))
    t = torch.from_numpy(np.load(os.path.join(runs_dir, "tokens_16_test.npy"))[:n].astype(np.int64))
    nearest = lambda v: F.interpolate(v, scale_factor=float(ratio), mode="nearest")
    res = {}
    for tag, tok in (("latent", quantise(vq, net(y))[2]), ("nearest", token_path(vq, nearest, y))):
        img = vq.decode_code(tok).clamp(-1, 1)
        res[f"token_match_{tag}"] = (tok == t).float().mean().item()
        res[f"psnr_{tag}"] = psnr(img, x)
        res[f"perc_{tag}"] = perceptual(clf, img, x).item()
    return res


def export(args, run, net, vq, clf):
    res = evaluate(net, vq, clf, args.ratio, args.n_eval, args.runs_dir)
    run.log("eval " + json.dumps(res))
    C.json_dump(os.path.join(run.dir, "eval.json"), res)
    meta = latent_upsampler_metadata(net)
    meta.update({k: f"{v:.4f}" for k, v in res.items()})
    hist = run.extra.get("losses", [])
    pick = hist[::max(1, len(hist) // 8)]
    pick += [h for h in hist[-1:] if h not in pick]
    curve = "| step | pixel MSE | perceptual | G adv | D hinge |\n|---|---|---|---|---|\n" + "\n".join(
        f"| {s} | {m:.4f} | {p:.4f} | {a:.3f} | {d:.3f} |" for s, m, p, a, d in pick)
    base = os.path.join(args.assets_dir, args.name)
    r, w = args.ratio, 16 // args.ratio
    C.write_card(base + ".md", f"{args.name}: MuLo-SD latent-space upsampler, r = {r}", [
        ("What", f"tools/vkspec_models.py `LatentUpsampler`: {w}x{w} fmnist_vq tokens -> own "
                 f"embedding ({args.channels}) -> {args.depth} masked row-causal 3x3 convs (SiLU; "
                 f"the taps on the row below are zero, stored as zeros) -> masked conv to "
                 f"{vq.cfg.codebook_embed_dim}x{r * r} channels -> pixel shuffle x{r} -> "
                 f"{w * r}x{w * r} latents, quantised to the nearest normalised fmnist_vq code = the "
                 f"high-resolution drafts. High rows {r}i..{r}i+{r - 1} depend on low rows <= i only. "
                 f"{sum(p.numel() for p in net.parameters())} parameters. `mulo --upsampler latent` "
                 "runs it (engine/model/latent_upsampler.*, decoding/upsampler.cpp)."),
        ("Training", f"`{C.cmdline()}`\n\nData: the 60k training images' tokens_{w}_train.npy "
                     "(image average-pooled, VQ-encoded by tools/encode_dataset.py) -> the 32x32 "
                     "image. Losses through the frozen fmnist_vq decoder (straight-through "
                     f"quantisation): pixel MSE + {args.perc_weight} x perceptual (LPIPS-style "
                     "distance on the frozen shipped classifier's conv feature maps, "
                     "fmnist_classifier conv1b/conv2b/conv3a; LPIPS is not available offline) + "
                     f"{args.gan_weight} x PatchGAN hinge generator loss (discriminator "
                     f"vkspec_models.PatchDiscriminator, from {args.gan_start:.0%} of the schedule) "
                     f"+ {args.commit_weight} x commitment to the chosen code + a warm-start "
                     f"regression to the real high-res token's code (weight {args.latent_weight} "
                     f"decayed to 0 by {args.latent_until:.0%}). Batch {args.batch}, peak lr "
                     f"{args.lr}, {run.summary()} on 2 shared CPU cores.\n\nLoss curve "
                     f"(single batches):\n\n{curve}"),
        (f"Results (first {args.n_eval} test images, held out)",
         f"| low-res tokens -> high-res tokens | latent upsampler | nearest pixel path |\n|---|---|---|\n"
         f"| match with the real high-res tokens | {res['token_match_latent']:.3f} | {res['token_match_nearest']:.3f} |\n"
         f"| PSNR of the decoded result vs the image (dB) | {res['psnr_latent']:.2f} | {res['psnr_nearest']:.2f} |\n"
         f"| perceptual distance (as trained, lower is better) | {res['perc_latent']:.4f} | {res['perc_nearest']:.4f} |\n\n"
         f"The nearest pixel path: VQ-decode, nearest {r}x, VQ-encode (decoding/pixel_resampler.*)."),
        ("Dtypes", "all F32."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    state = {k: v.float().contiguous() for k, v in net.state_dict().items()}
    save_file(state, base + ".safetensors", meta)
    run.log(f"exported {base}.safetensors")


if __name__ == "__main__":
    main()
