#!/usr/bin/env python3
"""`vkspec bench`'s quality with intervals end to end on the shipped 16x16 model and classifier:
the JSON fields kid, kid_se, fid_inf, class_accuracy_ci, vs_ar, precision and recall are there
with the right types and consistent values, the quality table prints, and the same images give the
same numbers live, resumed from --samples, and merged by --report (eval/sample_summary.h).
Skipped (77) without the Fashion-MNIST dataset.

usage: test_bench_quality.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import math
import os
import sys
import tempfile

from cli_run import run

IMAGES = 6
QUALITY = ["kid", "kid_se", "fid_inf", "class_accuracy_ci", "vs_ar", "precision", "recall", "fid", "fid_vs_ar"]


def check_live(results, stdout):
    failures = []
    if "quality with 95 % intervals" not in stdout:
        failures.append("no quality table in the output")
    by = {r["method"]: r for r in results}
    for name, r in by.items():
        for key in ("kid", "kid_se", "precision", "recall"):
            if not isinstance(r[key], float):
                failures.append(f"{name}: {key} is {r[key]!r}")
        if r["fid_inf"] is not None:
            failures.append(f"{name}: fid_inf {r['fid_inf']!r} from {IMAGES} images (needs 1280)")
        lo, hi = r["class_accuracy_ci"]
        if not (0 <= lo <= r["class_accuracy"] <= hi <= 1):
            failures.append(f"{name}: class accuracy {r['class_accuracy']} outside its interval {lo, hi}")
    if by["ar"]["vs_ar"] is not None:
        failures.append(f"ar: vs_ar is {by['ar']['vs_ar']!r}")
    v = by["zipar"]["vs_ar"]
    for key in ("nfe", "time_ms", "class_accuracy"):
        d = v[key]
        if d["pairs"] != IMAGES or not d["ci"][0] <= d["diff"] <= d["ci"][1]:
            failures.append(f"zipar: vs_ar.{key} {d}")
    if not math.isclose(v["nfe"]["diff"], by["zipar"]["nfe_mean"] - by["ar"]["nfe_mean"], rel_tol=1e-9):
        failures.append(f"zipar: vs_ar.nfe.diff {v['nfe']['diff']} is not the difference of the NFE means")
    if not v["nfe"]["significant"]:
        failures.append("zipar: fewer forwards than ar is not significant")
    return failures


def same(a, b, where):
    if isinstance(a, dict):
        return [f for k in a for f in same(a[k], b.get(k), f"{where}.{k}")]
    if isinstance(a, list):
        return [f for i, x in enumerate(a) for f in same(x, b[i], f"{where}[{i}]")]
    # Live records hold times as the sample files keep them (float32), so times agree exactly; what
    # differs is the order of float sums over features (KID, FID), to about 1e-12.
    if isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
        return []
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main():
    vkspec, assets = sys.argv[1], sys.argv[2]
    if not os.path.exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"):
        print("SKIP: dataset-fashion-mnist is not installed")
        return 77
    base = [vkspec, "bench", "--model", os.path.join(assets, "fmnist_gpt16.safetensors"), "--precision-recall"]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        live, resumed, merged = (os.path.join(d, f"{n}.json") for n in ("live", "resumed", "merged"))
        samples = os.path.join(d, "samples")
        os.mkdir(samples)
        gen = ["--methods", "ar,zipar", "--images", str(IMAGES), "--warmup", "0", "--samples", samples]
        r = run(base + gen + ["--json", live])
        print(r.stdout)
        results = json.load(open(live))["results"]
        failures += check_live(results, r.stdout)
        run(base + gen + ["--json", resumed])  # every image from the sample files
        run(base + ["--report", samples, "--json", merged])
        for other, label in ((resumed, "resumed"), (merged, "--report")):
            again = {x["method"]: x for x in json.load(open(other))["results"]}
            for x in results:
                for key in QUALITY:
                    failures += same(x[key], again[x["method"]][key], f"{label} {x['method']}.{key}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print(f"OK: quality fields of {len(results)} runs, equal live, resumed and merged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
