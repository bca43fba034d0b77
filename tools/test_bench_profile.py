#!/usr/bin/env python3
"""`vkspec bench --profile --json` end to end on the shipped 8x8 model (fmnist_gpt8), under the
validation layer: every run prints its table of GPU time by kernel, and the JSON's
time_ms_by_kernel lists {stage, kernel, calls, ms} per image whose ms add up to time_ms_by_model's
stages (and to device_ms_per_image); without --profile the field is null.

usage: test_bench_profile.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import os
import sys
import tempfile

from cli_run import run


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b)) + 1e-9


def check_profiled(result, stdout):
    name = result["method"]
    kernels, stages = result["time_ms_by_kernel"], result["time_ms_by_model"]
    if not kernels:
        return [f"{name}: time_ms_by_kernel is {kernels!r}"]
    failures = []
    if f"GPU time by kernel, {name}" not in stdout:
        failures.append(f"{name}: no kernel table in the output")
    summed = {}
    for k in kernels:
        if k["stage"] not in stages or not k["kernel"] or k["calls"] <= 0 or k["ms"] < 0:
            failures.append(f"{name}: bad row {k}")
        summed[k["stage"]] = summed.get(k["stage"], 0.0) + k["ms"]
    if [k["ms"] for k in kernels] != sorted((k["ms"] for k in kernels), reverse=True):
        failures.append(f"{name}: rows not sorted by ms")
    for stage, ms in stages.items():
        if not close(summed.get(stage, 0.0), ms):
            failures.append(f"{name}: {stage}'s kernels add up to {summed.get(stage, 0.0)} ms, the stage to {ms}")
    if not close(sum(summed.values()), result["device_ms_per_image"]):
        failures.append(f"{name}: kernels {sum(summed.values())} ms, device_ms_per_image {result['device_ms_per_image']}")
    return failures


def main():
    vkspec, assets = sys.argv[1], sys.argv[2]
    base = [vkspec, "bench", "--model", os.path.join(assets, "fmnist_gpt8.safetensors"), "--images", "1",
            "--warmup", "0", "--classifier", "none"]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "profiled.json")
        r = run(base + ["--methods", "ar,scd-mc", "--profile", "--json", path])
        results = json.load(open(path))["results"]
        for result in results:
            failures += check_profiled(result, r.stdout)
        print(r.stdout)
        plain = os.path.join(d, "plain.json")
        run(base + ["--methods", "ar", "--json", plain])
        for result in json.load(open(plain))["results"]:
            if result["time_ms_by_kernel"] is not None:
                failures.append(f"without --profile: time_ms_by_kernel is {result['time_ms_by_kernel']!r}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print(f"OK: {len(results)} profiled runs")


if __name__ == "__main__":
    main()
