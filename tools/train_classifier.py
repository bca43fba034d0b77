"""Stage 3: small CNN classifier for 32x32 Fashion-MNIST; its penultimate features give an
FID-style score for generated images (tools/fid.py). Also writes the test-set feature
statistics (32x32 and 16x16-pooled-then-upsampled) to train_runs/fid_stats_{32,16}.npz."""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

import common as C
import fid
from safetensors_io import load_file, save_file
from vkspec_models import Classifier


@torch.no_grad()
def accuracy(model, x, y, bs=500):
    model.eval()
    correct = sum((model(x[i:i + bs]).argmax(-1) == y[i:i + bs]).sum().item()
                  for i in range(0, len(x), bs))
    model.train()
    return correct / len(x)


def write_samples(model, x_uint8, y, path, per_class=8):
    """Grid of test images, one column per class (0..9), `per_class` rows; tiles the classifier
    gets wrong are shown inverted so the errors stand out."""
    model.eval()
    cols = []
    for c in range(10):
        idx = np.nonzero(y == c)[0][:per_class]
        with torch.no_grad():
            pred = model(C.to_unit(x_uint8[idx])).argmax(1).numpy()
        tiles = x_uint8[idx].copy()
        tiles[pred != c] = 255 - tiles[pred != c]
        cols.append(tiles)
    order = np.stack(cols, 1).reshape(-1, *x_uint8.shape[1:])  # row-major: row r = r-th of each class
    C.write_png(path, C.grid_image(order, 10, scale=2))


def samples_only(args):
    sd, _ = load_file(os.path.join(args.assets_dir, args.name + ".safetensors"))
    model = Classifier()
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    x, y = C.load_fmnist("test")
    write_samples(model, x, y, os.path.join(args.assets_dir, args.name + "_samples.png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="fmnist_classifier")
    ap.add_argument("--steps", type=int, default=1800)  # ~4 epochs at batch 128
    ap.add_argument("--budget-min", type=float, default=15)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--ckpt-every-s", type=float, default=180)
    ap.add_argument("--wall-cap-min", type=float, default=None,
                    help="hard wall-clock stop (default 4x budget)")
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--stats-dir", default=C.RUNS)
    ap.add_argument("--samples-only", action="store_true",
                    help="only redraw NAME_samples.png from the exported model")
    args = ap.parse_args()
    C.set_threads()
    if args.samples_only:
        return samples_only(args)
    torch.manual_seed(0)

    model = Classifier()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    run = C.Run(args.name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(model, opt)
    xtr, ytr = C.load_fmnist("train")
    xte, yte = C.load_fmnist("test")
    x_train, y_train = C.to_unit(xtr), torch.from_numpy(ytr)
    x_test, y_test = C.to_unit(xte), torch.from_numpy(yte)
    t_last, steps_last = time.time(), run.step
    model.train()
    while not run.done():
        i, g = C.step_batch(run.step, len(x_train), args.batch)
        x, y = x_train[i], y_train[i]
        # random +-2 px shifts: cheap augmentation, the padded border makes it lossless
        dx, dy = torch.randint(-2, 3, (2,), generator=g).tolist()
        x = torch.roll(x, (dy, dx), dims=(2, 3))
        C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03, min_ratio=0.02))
        loss = F.cross_entropy(model(x), y)
        C.descend(opt, loss)
        save = run.tick()
        if run.step % 50 == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} {sps:.3f} s/step "
                    f"progress {run.progress():.3f}")
            t_last, steps_last = time.time(), run.step
        if save:
            run.save(model, opt)
    run.save(model, opt)

    acc = accuracy(model, x_test, y_test)
    acc16 = accuracy(model, F.interpolate(F.avg_pool2d(x_test, 2), scale_factor=2.0), y_test)
    run.log(f"test accuracy {acc:.4f}, on 16x16-pooled test images {acc16:.4f}")
    os.makedirs(args.stats_dir, exist_ok=True)
    model.eval()
    for tag, x in (("32", x_test), ("16", fid.lowres_to_32(F.avg_pool2d(x_test, 2)))):
        mu, sigma = fid.stats(fid.features(model, x))
        np.savez(os.path.join(args.stats_dir, f"fid_stats_{tag}.npz"), mu=mu, sigma=sigma)
    # sanity anchor for the FID scale: train vs test images
    f_train = fid.stats(fid.features(model, x_train[:10000]))
    fid_tt = fid.frechet(*f_train, *fid.stats(fid.features(model, x_test)))
    run.log(f"FID(train 10k, test 10k) = {fid_tt:.3f}")

    os.makedirs(args.assets_dir, exist_ok=True)
    base = os.path.join(args.assets_dir, args.name)
    meta = {"vkspec.kind": "classifier", "in_channels": "1", "image_size": "32",
            "num_classes": "10", "feature_dim": "256", "pixel_range": "-1,1",
            "test_accuracy": f"{acc:.4f}"}
    C.write_card(base + ".md", f"{args.name}: Fashion-MNIST classifier (FID features)", [
        ("What", "tools/vkspec_models.py `Classifier`: conv3x3(1->32)-ReLU-conv(32->32)-ReLU-"
                 "maxpool, conv(32->64)-ReLU-conv(64->64)-ReLU-maxpool, conv(64->128)-ReLU-"
                 "maxpool, fc(2048->256)-ReLU = `features()`, dropout, fc(256->10). Input "
                 "[B,1,32,32] in [-1,1]. All tensors F32."),
        ("Training", f"`{C.cmdline()}`\n\nBatch {args.batch}, {run.summary()} "
                     f"on 2 shared CPU cores, +-2 px shift augmentation."),
        ("Results", f"- test accuracy (10k): {acc:.4f}\n"
                    f"- accuracy on 16x16-pooled, nearest-upsampled test images: {acc16:.4f}\n"
                    f"- FID(train 10k vs test 10k) in this feature space: {fid_tt:.3f} "
                    "(the floor any generator can reach)\n"
                    "- reference stats: train_runs/fid_stats_32.npz, fid_stats_16.npz"),
        ("Samples", f"`{args.name}_samples.png`: the first 8 test images of each class, one column "
                    "per class (0..9 left to right); tiles the classifier gets wrong are inverted."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    write_samples(model, xte, yte, base + "_samples.png")
    save_file({k: v.float().contiguous() for k, v in model.state_dict().items()},
              base + ".safetensors", meta)  # last: its existence marks the stage done
    run.log(f"exported {base}.safetensors")


if __name__ == "__main__":
    main()
