#!/usr/bin/env python3
"""`--devices` of `vkspec generate` and `vkspec bench`: device 0 named twice (two contexts, two
worker threads on lavapipe) gives what one device gives, seed for seed: generate's trace (tokens,
forwards per image) and .npz on the shipped 8x8 model; bench's sample files (tokens, classifier
features and predictions, forwards, work counters: every column but the timings), .npz files and
JSON on the shipped 16x16 model with ar and zipar, judged by the shipped classifier on worker 0; a
--devices 0,0 bench resumes a single-device --samples folder, and refuses one whose sample file
says its kernels rounded otherwise. Bad --devices values fail before any image with a message
naming the option.

usage: test_devices.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import os
import shutil
import struct
import sys
import tempfile

from cli_run import run

try:
    import numpy as np
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: numpy is not installed for this python (apt-get install python3-numpy)")
    sys.exit(77)

TIMINGS = {"wall_ms", "busy_ms"}  # per image, measured on its worker: differ run to run


def read_sample_file(path):
    """Every tensor of a bench --samples file, and its metadata."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    types = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64, "U64": np.uint64}
    out = {}
    for name, t in header.items():
        if name != "__metadata__":
            b, e = t["data_offsets"]
            out[name] = np.frombuffer(data[b:e], types[t["dtype"]]).reshape(t["shape"])
    return out, header.get("__metadata__", {})


def same_npz(a, b, where, failures):
    za, zb = np.load(a), np.load(b)
    for k in ("arr_0", "tokens", "labels"):
        if not np.array_equal(za[k], zb[k]):
            failures.append(f"{where}: {k} differs between one device and --devices 0,0")


def check_generate(vkspec, assets, d, failures):
    model = os.path.join(assets, "fmnist_gpt8.safetensors")
    base = [vkspec, "generate", "--model", model, "--method", "sjd", "--images", "5", "--seed", "11"]
    one = run(base + ["--trace", "one.json", "--npz", "one.npz"], d)
    two = run(base + ["--trace", "two.json", "--npz", "two.npz", "--devices", "0,0"], d)
    if "2 devices: 0 " not in two.stdout:
        failures.append(f"generate --devices 0,0 does not say it ran on two devices: {two.stdout}")
    a, b = (json.load(open(os.path.join(d, f)))["images"] for f in ("one.json", "two.json"))
    if [im["seed"] for im in b] != list(range(11, 16)):
        failures.append(f"generate --devices 0,0: trace seeds {[im['seed'] for im in b]}, expected 11..15 in order")
    for x, y in zip(a, b):
        for key in ("seed", "class", "tokens", "nfe", "draft_forwards"):
            if x[key] != y[key]:
                failures.append(f"generate seed {x['seed']}: {key} differs with --devices 0,0")
        # Every step's event but its timings.
        strip = lambda events: [{k: v for k, v in e.items() if "ms" not in k} for e in events]
        if strip(x["events"]) != strip(y["events"]):
            failures.append(f"generate seed {x['seed']}: the steps differ with --devices 0,0")
    same_npz(os.path.join(d, "one.npz"), os.path.join(d, "two.npz"), "generate", failures)


def check_bench(vkspec, assets, d, failures):
    model = os.path.join(assets, "fmnist_gpt16.safetensors")
    base = [vkspec, "bench", "--model", model, "--dataset", "none"]
    results = {}
    for name, extra in (("one", []), ("two", ["--devices", "0,0"])):
        os.mkdir(os.path.join(d, name))
        run(base + ["--methods", "ar,zipar", "--warmup", "0", "--images", "3", "--samples", name, "--npz", f"{name}.npz", "--json", f"{name}.json"] + extra, d)
        results[name] = {x["method"]: x for x in json.load(open(os.path.join(d, f"{name}.json")))["results"]}
    for method in ("ar", "zipar"):
        a, meta_a = read_sample_file(os.path.join(d, "one", f"{method}_seed0.safetensors"))
        b, meta_b = read_sample_file(os.path.join(d, "two", f"{method}_seed0.safetensors"))
        if meta_a != meta_b:
            failures.append(f"bench {method}: sample file metadata {meta_a} != {meta_b}")
        if b["seed"].tolist() != [0, 1, 2]:
            failures.append(f"bench {method} --devices 0,0: seeds {b['seed'].tolist()}, expected 0, 1, 2")
        for key in sorted(set(a) - TIMINGS):
            if key not in b or not np.array_equal(a[key], b[key]):
                failures.append(f"bench {method}: '{key}' of the sample file differs with --devices 0,0")
        same_npz(os.path.join(d, f"one_{method}.npz"), os.path.join(d, f"two_{method}.npz"), f"bench {method}",
                 failures)
        for key in ("nfe_mean", "accepted_length_mean", "class_accuracy", "fid_vs_ar", "dispatches_per_image"):
            x, y = results["one"][method][key], results["two"][method][key]
            if x != y:
                failures.append(f"bench {method}: JSON {key} {x} on one device, {y} with --devices 0,0")
        if results["two"][method]["speedup"] <= 0:
            failures.append(f"bench {method} --devices 0,0: no speedup against ar")
    # A single-device folder resumed on two (each warmed up first): its images kept, one more made.
    shutil.copytree(os.path.join(d, "one"), os.path.join(d, "resumed"))
    r = run(base + ["--methods", "ar", "--warmup", "1", "--images", "4", "--samples", "resumed", "--devices", "0,0"], d)
    if "3 images already in" not in r.stderr:
        failures.append(f"bench --devices 0,0 did not resume the single-device sample file:\n{r.stderr}")
    s, _ = read_sample_file(os.path.join(d, "resumed", "ar_seed0.safetensors"))
    if sorted(s["seed"].tolist()) != [0, 1, 2, 3]:
        failures.append(f"bench --devices 0,0 resumed: seeds {s['seed'].tolist()}, expected 0..3")
    # The same file, but made by kernels of another rounding (engine/ops/kernel_rounding.h): its
    # tokens are another stream, so resuming it must fail, naming the rounding.
    os.mkdir(os.path.join(d, "rounded"))
    src = os.path.join(d, "one", "ar_seed0.safetensors")
    raw = open(src, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header["__metadata__"]["rounding"] = "another"
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(d, "rounded", "ar_seed0.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + raw[8 + n:])
    r = run(base + ["--methods", "ar", "--warmup", "0", "--images", "4", "--samples", "rounded"], d, expect_ok=False)
    if r.returncode != 1 or 'kernel rounding "another"' not in r.stderr:
        failures.append(f"bench resumed a sample file of another kernel rounding (exit {r.returncode}):\n{r.stderr}")


def check_bad_values(vkspec, assets, d, failures):
    model = os.path.join(assets, "fmnist_gpt8.safetensors")
    g = [vkspec, "generate", "--model", model]
    b = [vkspec, "bench", "--model", model, "--classifier", "none", "--images", "1"]
    cases = [(g + ["--devices", "x"], "not a device index"),
             (g + ["--devices", "99"], "there is no device 99"),
             (g + ["--devices", "0,"], "names no device"),
             (g + ["--devices", ""], "names no device"),
             (b + ["--devices", "0,-1"], "not a device index"),
             (b + ["--devices", "1000000000000"], "there is no device"),
             ([vkspec, "bench", "--report", d, "--devices", "0"], "does not apply")]
    for args, words in cases:
        r = run(args, d, expect_ok=False)
        if r.returncode != 1 or words not in r.stderr or "images/s" in r.stderr:
            failures.append(f"{' '.join(args[1:])}: exit {r.returncode}, expected an error with '{words}' before any "
                            f"image:\n{r.stderr}")


def main():
    vkspec, assets = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures = []
    with tempfile.TemporaryDirectory() as d:
        check_bad_values(vkspec, assets, d, failures)
        check_generate(vkspec, assets, d, failures)
        check_bench(vkspec, assets, d, failures)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("OK: generate and bench with --devices 0,0 equal one device seed for seed; bad --devices refused")


if __name__ == "__main__":
    main()
