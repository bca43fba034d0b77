#!/usr/bin/env python3
"""`vkspec generate --caption-embeddings FILE` end to end on a small random LlamaGen t2i checkpoint
(tools/reference.py make-t2i, converted by tools/convert_llamagen.py) on the shipped tokenizer's
vocabulary: every method that needs no extra trained model (ar, sjd, scd-mc, zipar, lantern with
Jacobi drafts), mulo with a t2i low-resolution model and flashar with a random t2i FlashAR file
(reference.py make-flashar on the converted model) generate, the trace records the caption,
--npz labels the images -1 and --out-dir names them by seed alone, and bad inputs fail with a
message naming the problem. From a prompt: the model converted with --text-encoder naming a tiny
T5 (make-t5 with a make-spiece SentencePiece model, tools/convert_t5.py) generates with
`--prompt` (the trace records it) and benches with `--prompts`; a model naming none refuses.

usage: test_generate_t2i.py VKSPEC_BINARY
"""
import json
import os
import sys
import tempfile

from cli_run import run

try:
    import torch  # noqa: F401  (reference.py needs it)
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable


def make_model(d, name, grid, seed, extra=()):
    pt, st = os.path.join(d, name + ".pt"), os.path.join(d, name + ".safetensors")
    run([PY, os.path.join(HERE, "reference.py"), "make-t2i", pt, "--dim", "64", "--layers", "1", "--heads", "2",
         "--vocab", "1024", "--grid", str(grid), "--cls", "8", "--caption-dim", "16", "--seed", str(seed)])
    run([PY, os.path.join(HERE, "convert_llamagen.py"), pt, st, "--kind", "gpt", "--dtype", "f32", "--n-head", "2",
         "--grid", str(grid), "--cls-token-num", "8"] + list(extra))
    return st


def from_prompts(vkspec, d, plain):
    """A t2i model naming a tiny T5 beside it: --prompt and --prompts; the plain model refuses."""
    ref, hf = os.path.join(HERE, "reference.py"), os.path.join(d, "t5_hf")
    run([PY, ref, "make-t5", hf, "--d-model", "16", "--layers", "1", "--heads", "2", "--d-kv", "8", "--d-ff", "24",
         "--vocab", "96"])
    run([PY, ref, "make-spiece", hf])
    run([PY, os.path.join(HERE, "convert_t5.py"), hf, os.path.join(d, "t5")])
    model = make_model(d, "t2i_prompt", 4, 0, ["--text-encoder", "t5.safetensors"])
    trace = os.path.join(d, "prompt.json")
    run([vkspec, "generate", "--model", model, "--prompt", "A red fox", "--method", "scd-mc", "--images", "2",
         "--out", os.path.join(d, "prompt.png"), "--trace", trace])
    failures = [f"--prompt: the trace records {im.get('prompt')}" for im in json.load(open(trace))["images"]
                if im.get("prompt") != "A red fox"]
    prompts = os.path.join(d, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("a red fox\nan ankle boot\n")
    run([vkspec, "bench", "--model", model, "--prompts", prompts, "--methods", "ar,sjd", "--images", "2",
         "--classifier", "none", "--json", os.path.join(d, "bench.json")])
    r = run([vkspec, "generate", "--model", plain, "--prompt", "a fox"], expect_ok=False)
    if r.returncode not in (1, 2) or "text encoder" not in r.stderr:
        failures.append(f"--prompt on a model without a text encoder: exit {r.returncode}: {r.stderr}")
    print("from prompts: generate and bench" + (", refused without a text encoder" if not failures else ""))
    return failures


def check_sample_outputs(base, d):
    """--npz and --out-dir of a caption-conditioned run: labels -1, PNGs named by seed alone."""
    import numpy as np
    npz, pngs = os.path.join(d, "caption.npz"), os.path.join(d, "caption_pngs")
    run(base + ["--seed", "5", "--npz", npz, "--out-dir", pngs])
    z = np.load(npz)
    failures = []
    if z["labels"].tolist() != [-1, -1] or z["tokens"].shape != (2, 16) or z["arr_0"].shape[0] != 2:
        failures.append(f"--npz of a caption run: labels {z['labels'].tolist()}, tokens {z['tokens'].shape}")
    if sorted(os.listdir(pngs)) != ["seed000005.png", "seed000006.png"]:
        failures.append(f"--out-dir of a caption run: {sorted(os.listdir(pngs))}")
    return failures


def main():
    vkspec = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        model = make_model(d, "t2i", 4, 0)
        low = make_model(d, "t2i_low", 2, 1)
        flashar = os.path.join(d, "flashar.safetensors")
        run([PY, os.path.join(HERE, "reference.py"), "make-flashar", flashar, "--gpt", model])
        caption = os.path.join(d, "caption.npy")
        run([PY, os.path.join(HERE, "reference.py"), "make-caption", caption, "--tokens", "5", "--dim", "16"])
        base = [vkspec, "generate", "--model", model, "--caption-embeddings", caption, "--images", "2",
                "--cfg", "2", "--top-k", "50"]
        for method, extra in [("ar", []), ("sjd", []), ("scd-mc", ["--window", "8"]), ("zipar", []),
                              ("lantern", ["--k", "8"]), ("mulo", ["--low-res", low]),
                              ("flashar", ["--flashar", flashar])]:
            trace = os.path.join(d, method + ".json")
            run(base + ["--method", method, "--out", os.path.join(d, method + ".png"), "--trace", trace] + extra)
            images = json.load(open(trace))["images"]
            for im in images:
                tokens = [t for row in im["tokens"] for t in row]
                if len(tokens) != 16 or not all(0 <= t < 1024 for t in tokens):
                    failures.append(f"{method}: tokens {tokens}")
                if "class" in im or "caption" not in im.get("condition", ""):
                    failures.append(f"{method}: the trace does not record the caption: {im.get('condition')}")
            print(f"{method}: {len(images)} images from the caption")
        failures += check_sample_outputs(base, d)
        failures += from_prompts(vkspec, d, model)
        bad = [
            (base + ["--method", "ar", "--class", "1"], "exclude each other"),
            ([vkspec, "generate", "--model", model, "--out", os.path.join(d, "x.png")], "--caption-embeddings"),
            ([vkspec, "generate", "--caption-embeddings", caption, "--out", os.path.join(d, "y.png")],
             "class-conditional"),
            ([vkspec, "generate", "--model", model, "--caption-embeddings", os.path.join(d, "missing.npy")],
             "missing.npy"),
            (base + ["--method", "flashar"], "was not post-trained from the target"),  # the shipped c2i one
            (base + ["--method", "flashar", "--flashar", model], "not a FlashAR file"),
        ]
        wrong = os.path.join(d, "wrong.npy")
        run([PY, os.path.join(HERE, "reference.py"), "make-caption", wrong, "--tokens", "5", "--dim", "12"])
        bad.append(([vkspec, "generate", "--model", model, "--caption-embeddings", wrong], "caption"))
        for args, words in bad:
            r = run(args, expect_ok=False)
            if r.returncode not in (1, 2) or words not in r.stderr:
                failures.append(f"{' '.join(args[1:])}: exit {r.returncode}, expected an error with '{words}':\n"
                                f"{r.stderr}")
            else:
                print(f"refused: {r.stderr.strip().splitlines()[-1]}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
