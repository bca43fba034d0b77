#!/usr/bin/env python3
"""Paired comparison of two runs kept by `vkspec bench --samples` (docs/methods.md).

Image i of every bench command has seed S + i and class (S + i) mod classes, so two methods'
sample files describe the same conditions seed by seed. Comparing them on their common seeds
removes the image-to-image spread (some classes and seeds need more forwards whatever the
method) from the difference, which is what decides whether a few percent fewer forwards is real.

  /usr/bin/python3 tools/paired_stats.py A.safetensors[,A2...] B.safetensors[,B2...]

Prints, over the seeds both runs have: the mean forwards (NFE) of each, the mean paired
difference B - A with its standard error and 95 % interval, and the same for class accuracy
(from the classifier's predictions; per-image 0/1). Exit 1 when the runs share no seed or a run
repeats a seed.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_file  # noqa: E402


def load_run(spec):
    """Comma list of sample files -> (label, {seed: (nfe, correct or None)})."""
    rows, label = {}, None
    for path in spec.split(","):
        t, meta = load_file(path)
        if meta.get("format") != "vkspec-samples-1":
            raise SystemExit(f"paired_stats: {path} is not a vkspec sample file")
        this = f"{meta.get('method', '?')} {meta.get('options', '')}".strip()
        if label is not None and this != label:
            raise SystemExit(f"paired_stats: {path} holds '{this}', the other files of this run '{label}'")
        label = this
        seeds, nfe, cls, pred = (t[k].tolist() for k in ("seed", "nfe", "class", "predicted"))
        for s, n, c, p in zip(seeds, nfe, cls, pred):
            if s in rows:
                raise SystemExit(f"paired_stats: seed {s} appears twice in run '{label}' ({path})")
            rows[s] = (n, None if p < 0 else int(p == c))
    return label, rows


def mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    la, ra = load_run(args.a)
    lb, rb = load_run(args.b)
    seeds = sorted(set(ra) & set(rb))
    if not seeds:
        print(f"paired_stats: '{la}' and '{lb}' share no seed", file=sys.stderr)
        return 1
    print(f"A: {la}\nB: {lb}\ncommon seeds: {len(seeds)} ({seeds[0]}..{seeds[-1]})")
    na = [ra[s][0] for s in seeds]
    nb = [rb[s][0] for s in seeds]
    d, se = mean_se([b - a for a, b in zip(na, nb)])
    print(f"NFE: A {sum(na) / len(na):.2f}, B {sum(nb) / len(nb):.2f}; B - A {d:+.2f} +- {se:.2f} (SE), "
          f"95 % interval [{d - 1.96 * se:+.2f}, {d + 1.96 * se:+.2f}], {100 * d / (sum(na) / len(na)):+.1f} %")
    judged = [s for s in seeds if ra[s][1] is not None and rb[s][1] is not None]
    if judged:
        ca = [ra[s][1] for s in judged]
        cb = [rb[s][1] for s in judged]
        d, se = mean_se([b - a for a, b in zip(ca, cb)])
        print(f"class accuracy ({len(judged)} judged): A {100 * sum(ca) / len(ca):.1f} %, B {100 * sum(cb) / len(cb):.1f} %; "
              f"B - A {100 * d:+.1f} +- {100 * se:.1f} points (SE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
