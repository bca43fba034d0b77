"""Shared plumbing for the training scripts: data, checkpoints, time budget, logging, PNG."""
import gzip
import json
import math
import os
import struct
import sys
import time
import zlib

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(ROOT, "assets")
RUNS = os.path.join(ROOT, "train_runs")
FMNIST_DIR = "/usr/share/datasets/fashion-mnist"  # Debian package dataset-fashion-mnist
FMNIST_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def _idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fmnist(split):
    """split 'train'|'test' -> (uint8 images [N,32,32] zero-padded by 2 px, int64 labels [N])."""
    pre = "train" if split == "train" else "t10k"
    x = _idx(os.path.join(FMNIST_DIR, f"{pre}-images-idx3-ubyte.gz"))
    y = _idx(os.path.join(FMNIST_DIR, f"{pre}-labels-idx1-ubyte.gz")).astype(np.int64)
    return np.pad(x, ((0, 0), (2, 2), (2, 2))), y


def to_unit(x_uint8):
    """uint8 [N,H,W] -> float tensor [N,1,H,W] in [-1,1] (0 -> -1 background, 255 -> +1)."""
    return torch.from_numpy(x_uint8).float().div(127.5).sub(1.0).unsqueeze(1)


def from_unit(x):
    """[-1,1] tensor -> uint8 numpy (same rounding the C++ side should use)."""
    return ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).cpu().numpy()


def write_png(path, img):
    """img: uint8 [H,W] grayscale. Minimal PNG encoder (no PIL here)."""
    h, w = img.shape
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def grid_image(imgs, ncol, pad=2, scale=1):
    """imgs uint8 [N,H,W] -> one uint8 grid image, gray padding between tiles."""
    n, h, w = imgs.shape
    if scale > 1:
        imgs = imgs.repeat(scale, 1).repeat(scale, 2)
        h, w = h * scale, w * scale
    nrow = (n + ncol - 1) // ncol
    out = np.full((nrow * (h + pad) + pad, ncol * (w + pad) + pad), 128, np.uint8)
    for i in range(n):
        r, c = divmod(i, ncol)
        out[pad + r * (h + pad):pad + r * (h + pad) + h, pad + c * (w + pad):pad + c * (w + pad) + w] = imgs[i]
    return out


class Log:
    def __init__(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "a")

    def __call__(self, msg):
        line = time.strftime("%Y-%m-%d %H:%M:%S ") + msg
        print(line, flush=True)
        self.f.write(line + "\n")
        self.f.flush()


def wilson(k, n, z=1.96):
    """The Wilson score interval of k successes in n (95 % at z = 1.96), as (lo, hi)."""
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z / den * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return c - h, c + h


def lr_at(progress, base_lr, warmup_frac, min_ratio=0.1):
    """Linear warmup then cosine to min_ratio*base_lr; progress in [0,1]."""
    if progress < warmup_frac:
        return base_lr * max(progress, 1e-3) / warmup_frac
    t = min(1.0, (progress - warmup_frac) / max(1e-9, 1 - warmup_frac))
    return base_lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * t)))


class Run:
    """Resumable training state in train_runs/<name>/: ckpt.pt (model, optimizer, step, time
    spent so far), train.log.

    The CPU is shared with C++ builds and we run at nice 10, so wall time says little about how
    much training happened. The budget is therefore compute: process CPU seconds / threads
    ("uncontended minutes"). `wall_cap_min` is the hard wall-clock stop. The LR schedule
    follows progress = max(step/steps, compute/budget, wall/wall_cap), so whichever limit binds
    first, the cosine still finishes."""

    def __init__(self, name, steps, budget_min, ckpt_every_s=300, run_dir=None, wall_cap_min=None):
        self.dir = run_dir or os.path.join(RUNS, name)
        os.makedirs(self.dir, exist_ok=True)
        self.name, self.steps, self.budget_s = name, steps, budget_min * 60.0
        self.wall_cap_s = (wall_cap_min or 4 * budget_min) * 60.0
        self.threads = max(1, torch.get_num_threads())
        self.ckpt_path = os.path.join(self.dir, "ckpt.pt")
        self.log = Log(os.path.join(self.dir, "train.log"))
        self.ckpt_every_s = ckpt_every_s
        self.step, self.train_s, self.compute_s, self.extra = 0, 0.0, 0.0, {}

    def resume(self, model, opt):
        if os.path.exists(self.ckpt_path):
            ck = torch.load(self.ckpt_path, map_location="cpu")
            model.load_state_dict(ck["model"])
            if opt is not None and ck.get("opt") is not None:
                opt.load_state_dict(ck["opt"])
            self.step, self.train_s = ck["step"], ck["train_s"]
            self.compute_s, self.extra = ck.get("compute_s", 0.0), ck.get("extra", {})
            self.log(f"resumed at step {self.step}: {self.train_s / 60:.1f} wall min, "
                     f"{self.compute_s / 60:.1f} compute min")
        self._last_save = time.time()
        self._t0, self._c0 = time.time(), time.process_time()
        self._base_s, self._base_c = self.train_s, self.compute_s
        return self.step

    def progress(self):
        return min(1.0, max(self.step / self.steps, self.compute_s / self.budget_s,
                            self.train_s / self.wall_cap_s))

    def tick(self):
        """Call after each step; returns True when it is time to checkpoint."""
        self.step += 1
        self.train_s = self._base_s + (time.time() - self._t0)
        self.compute_s = self._base_c + (time.process_time() - self._c0) / self.threads
        return time.time() - self._last_save >= self.ckpt_every_s

    def done(self):
        return self.progress() >= 1.0

    def summary(self):
        return (f"{self.step} steps, {self.compute_s / 60:.1f} compute min "
                f"(CPU time / {self.threads} threads), {self.train_s / 60:.1f} wall min")

    def save(self, model, opt):
        tmp = self.ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict() if opt else None,
                    "step": self.step, "train_s": self.train_s, "compute_s": self.compute_s,
                    "extra": self.extra}, tmp)
        os.replace(tmp, self.ckpt_path)  # atomic: a kill mid-save keeps the previous ckpt
        self._last_save = time.time()


def step_batch(step, n, size):
    """A training step's batch: size indices below n, drawn from a generator seeded by the step so
    that a resumed run trains on the same batches. Returns (indices, the generator), which goes on
    to the step's other draws."""
    g = torch.Generator().manual_seed(step)
    return torch.randint(0, n, (size,), generator=g), g


def set_lr(opt, lr):
    """Sets every parameter group's learning rate; returns lr."""
    for pg in opt.param_groups:
        pg["lr"] = lr
    return lr


def descend(opt, loss, clip=None):
    """One optimiser step on loss: gradients cleared and back-propagated, clip() (a gradient
    clipping call, when given) applied to them, then the step."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if clip is not None:
        clip()
    opt.step()


def fp16_export(state, keep_f32=lambda name, t: t.dim() < 2):
    """Cast weights to f16 except tensors selected by keep_f32 (norms, biases, codebook)."""
    return {k: (v.float() if keep_f32(k, v) else v.half()).contiguous() for k, v in state.items()}


def set_threads():
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))


def cmdline():
    return f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '2')} /usr/bin/python3 " + " ".join(
        [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])


def write_card(path, title, sections):
    """sections: list of (heading, text) pairs; text already markdown."""
    with open(path, "w") as f:
        f.write(f"# {title}\n\n")
        for h, t in sections:
            f.write(f"## {h}\n\n{t.rstrip()}\n\n")


def fmt_meta(meta):
    return "\n".join(f"- `{k}` = `{v}`" for k, v in meta.items())


def json_dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
