#!/usr/bin/env python3
"""Speed-quality trade-off plots from `vkspec bench --json` files (docs/methods.md).

Each run is a point at (forwards relative to ar, quality metric): target forwards, or with
--forwards all every model's (drafter, low-res model, heads: the honest cost); class accuracy gets
its 95 % interval as an error bar. Runs of the same method that differ in one option (a --sweep)
are joined by a line in sweep order and labelled with the option's values. ar is the reference
point at x = 1.

  /usr/bin/python3 tools/plot_bench.py docs/tradeoff_fid.png bench.json [more.json ...] --metric fid
Needs matplotlib (tools/install-deps.sh --plots).
"""
import argparse
import json
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {"fid": "FID vs Fashion-MNIST test (classifier features)", "fid_vs_ar": "FID vs ar's samples",
          "class_accuracy": "class accuracy (%)"}


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            j = json.load(f)
        for r in j["results"]:
            r["_file"] = p
            runs.append(r)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--metric", choices=sorted(LABELS), default="fid")
    ap.add_argument("--title", default="")
    ap.add_argument("--forwards", choices=["target", "all"], default="target",
                    help="x axis: target forwards, or the forwards of every model")
    ap.add_argument("--points", action="store_true",
                    help="one labelled point per run instead of one line per method and file "
                         "(for `bench --report` files, which hold many unrelated settings)")
    args = ap.parse_args()
    runs = load(args.bench)
    ar = [r for r in runs if r["method"] == "ar"]
    if not ar:
        raise SystemExit("plot_bench: no ar run to normalise forwards against")
    fwd = "all_forwards_mean" if args.forwards == "all" else "nfe_mean"
    ar_nfe = ar[0][fwd]
    # One line per method and file (a file is one bench run, so one sweep); ar once.
    groups = defaultdict(list)
    for i, r in enumerate(runs):
        key = (r["method"], "" if r["method"] == "ar" else (i if args.points else r["_file"]))
        if r["method"] != "ar" or not groups[key]:
            groups[key].append(r)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    used_labels = set()
    series = 0  # series drawn so far (ax.lines also counts error-bar caps)
    for (method, _), rs in groups.items():
        pts = [(r[fwd] / ar_nfe, r.get(args.metric), r) for r in rs if r.get(args.metric) is not None]
        if not pts:
            continue
        scale = 100.0 if args.metric == "class_accuracy" else 1.0
        xs, ys = [p[0] for p in pts], [p[1] * scale for p in pts]
        style = "o" if method == "ar" else "o-"
        if args.points:  # ten colours repeat: vary the marker too (12 markers: 60 distinct styles)
            style = "osD^vP*Xph<>"[series % 12]
        series += 1
        # Options that vary within the line label the points; the fixed ones name the line.
        keys = sorted({k for _, _, r in pts for k in r["options"]})
        varying = [k for k in keys if len({r["options"].get(k) for _, _, r in pts}) > 1]
        fixed = ",".join(f"{k}={pts[0][2]['options'][k]}" for k in keys if k not in varying and k in pts[0][2]["options"])
        swept = f", {varying[0]} swept" if len(varying) == 1 else ""
        label = method + (f" ({fixed})" if fixed else "") + swept
        if args.points and method != "ar":
            label = method + " " + ",".join(f"{k}={v}" for k, v in sorted(pts[0][2]["options"].items()))
            # Settings outside the method's options (another model file) show as the file's name.
            if label in used_labels:
                label += f" ({os.path.splitext(os.path.basename(pts[0][2]['_file']))[0]})"
            used_labels.add(label)
        line = ax.plot(xs, ys, style, label=label, markersize=5)[0]
        cis = [r.get(args.metric + "_ci") for _, _, r in pts]
        if all(ci and len(ci) == 2 for ci in cis):
            lo = [y - ci[0] * scale for y, ci in zip(ys, cis)]
            hi = [ci[1] * scale - y for y, ci in zip(ys, cis)]
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", ecolor=line.get_color(), elinewidth=0.8, capsize=2)
        for x, y, (_, _, r) in zip(xs, ys, pts):
            if varying:
                # One swept option: its value alone (the legend names the line); else key=value.
                text = (str(r["options"].get(varying[0], "-")) if len(varying) == 1 else
                        ",".join(f"{k}={r['options'].get(k, '-')}" for k in varying))
                ax.annotate(text, (x, y), fontsize=6,
                            xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(("forwards of every model" if args.forwards == "all" else "target forwards") +
                  " relative to ar (lower is cheaper)")
    ax.set_ylabel(LABELS[args.metric])
    ax.axvline(1.0, color="grey", lw=0.5)
    ax.grid(alpha=0.3)
    if series > 12:  # a legend inside would cover the points (and run off the figure past ~25)
        fig.set_size_inches(7 + (5 if series > 24 else 3), 5)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                  ncol=2 if series > 24 else 1)
    else:
        ax.legend(fontsize=7)
    n = {r["images"] for r in runs}
    ax.set_title(args.title or f"speed vs quality ({', '.join(str(i) for i in sorted(n))} images per run)", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, bbox_inches="tight")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
