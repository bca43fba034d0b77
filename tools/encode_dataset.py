"""Stage 2: tokenize Fashion-MNIST with the trained tokenizer.

Writes to train_runs/ (int16 token grids, raster order row-major):
  tokens_16_{train,test}.npy  [N,16,16]  from the 32x32 images
  tokens_8_{train,test}.npy   [N,8,8]    from the images 2x2 average-pooled to 16x16
  tokens_4_{train,test}.npy   [N,4,4]    from the images 4x4 average-pooled to 8x8 (--grids 4)
  labels_{train,test}.npy     [N]        int64 class ids
The last grid's test file is written last and marks the stage done (tokens_8_test.npy by
default).
"""
import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

import common as C
from safetensors_io import load_file
from vkspec_models import VQModel, vq_config_from_metadata


def load_vq(path):
    sd, meta = load_file(path)
    model = VQModel(vq_config_from_metadata(meta))
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    return model.eval()


@torch.no_grad()
def encode(model, x, bs=500):
    out = []
    for i in range(0, len(x), bs):
        out.append(model.encode(x[i:i + bs])[2].to(torch.int16))
    return torch.cat(out).numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vq", default=os.path.join(C.ASSETS, "fmnist_vq.safetensors"))
    ap.add_argument("--out-dir", default=C.RUNS)
    ap.add_argument("--grids", default="16,8",
                    help="token grids to write: 16 (32x32 images), 8 (pooled 2x2), 4 (pooled 4x4)")
    ap.add_argument("--limit", type=int, default=0, help="encode only N images per split (smoke)")
    args = ap.parse_args()
    C.set_threads()
    os.makedirs(args.out_dir, exist_ok=True)
    log = C.Log(os.path.join(args.out_dir, "encode_dataset.log"))
    model = load_vq(args.vq)
    for split in ("train", "test"):
        x, y = C.load_fmnist(split)
        if args.limit:
            x, y = x[:args.limit], y[:args.limit]
        x = C.to_unit(x)
        np.save(os.path.join(args.out_dir, f"labels_{split}.npy"), y)
        for tag in args.grids.split(","):
            pool = 16 // int(tag)  # the VQ downsamples 2x: a grid of g tokens is 2g pixels
            xin = F.avg_pool2d(x, pool) if pool > 1 else x
            tok = encode(model, xin)
            used = len(np.unique(tok))
            path = os.path.join(args.out_dir, f"tokens_{tag}_{split}.npy")
            np.save(path + ".tmp.npy", tok)
            os.replace(path + ".tmp.npy", path)  # the last file marks the stage done
            log(f"{split} tokens_{tag} {tok.shape} distinct codes {used}")


if __name__ == "__main__":
    main()
