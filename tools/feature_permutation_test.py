#!/usr/bin/env python3
"""Whether two runs kept by `vkspec bench --samples` drew their images from the same distribution,
by a permutation test on the Frechet distance between their classifier features.

FID against the test set has no interval in `bench` (its sampling spread at 1000 images is not
known here), so a gap between two methods' FIDs says little by itself. Under the hypothesis that
both runs sample one class-conditional distribution (a lossless method against ar), images of one
class are exchangeable between the runs: pooling each class's features from both runs, splitting
them at random into sets of the runs' sizes and recomputing the distance gives the statistic's
null distribution, and the share of splits at least as far apart as the real one is the p-value
(with the +1 correction, so never 0: the smallest is 1 / (permutations + 1)). Splitting within
classes keeps each set's class make-up, which a pooled shuffle would not (its null is wider and
its p too large). Only the seeds both runs have are used. Same-seed images of two methods may be
correlated (shared random streams); positive correlation makes the runs look alike and the test
conservative.

  /usr/bin/python3 tools/feature_permutation_test.py A.safetensors B.safetensors [--permutations N]

Prints the Frechet distance between the runs, the null's mean and 95th percentile, and p.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fid import frechet, stats  # noqa: E402
from safetensors_io import load_file  # noqa: E402


def load(path):
    """seed -> (class, feature row)."""
    t, _ = load_file(path)
    if not all(k in t for k in ("features", "seed", "class")):
        sys.exit(f"{path}: no 'features', 'seed' or 'class' tensor (not a vkspec sample file?)")
    f, seeds, cls = t["features"].double().numpy(), t["seed"].numpy(), t["class"].numpy()
    if f.ndim != 2 or f.shape[0] != len(seeds) or len(cls) != len(seeds) or f.shape[1] < 1:
        sys.exit(f"{path}: features of shape {f.shape} for {len(seeds)} seeds")
    if len(set(seeds.tolist())) != len(seeds):
        sys.exit(f"{path}: a seed repeats")
    return {s: (c, row) for s, c, row in zip(seeds.tolist(), cls.tolist(), f)}


def distance(a, b):
    return frechet(*stats(a), *stats(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.permutations < 1:
        sys.exit("--permutations must be at least 1")
    ra, rb = load(args.a), load(args.b)
    common = sorted(set(ra) & set(rb))
    if len(common) < 2:
        sys.exit(f"the runs share {len(common)} seeds; need at least 2")
    if any(ra[s][0] != rb[s][0] for s in common):
        sys.exit("a seed has different classes in the two runs: not the same experiment")
    a, b = np.stack([ra[s][1] for s in common]), np.stack([rb[s][1] for s in common])
    if a.shape[1] != b.shape[1]:
        sys.exit(f"feature sizes differ: {a.shape[1]} and {b.shape[1]} (another classifier?)")
    classes = np.array([ra[s][0] for s in common])
    strata = [np.concatenate([a[classes == c], b[classes == c]]) for c in sorted(set(classes.tolist()))]
    real = distance(a, b)
    rng = np.random.default_rng(args.seed)
    null = []
    for _ in range(args.permutations):
        halves = [rng.permutation(pool) for pool in strata]
        null.append(distance(np.concatenate([h[:len(h) // 2] for h in halves]),
                             np.concatenate([h[len(h) // 2:] for h in halves])))
    null = np.array(null)
    p = (1 + int((null >= real).sum())) / (1 + len(null))
    print(f"{os.path.basename(args.a)} vs {os.path.basename(args.b)}, {len(common)} common seeds: "
          f"Frechet distance {real:.3f}; null mean {null.mean():.3f}, 95th percentile "
          f"{np.percentile(null, 95):.3f}; p = {p:.4f} ({args.permutations} permutations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
