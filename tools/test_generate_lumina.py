#!/usr/bin/env python3
"""Lumina-mGPT end to end through the CLI: a random tiny Lumina-mGPT folder in the released layout
(tools/reference.py make-lumina) and a tiny Chameleon VQGAN (make-chameleon-vq), both converted by
tools/convert_lumina.py (the model naming its VQGAN), then `vkspec generate --prompt` with every
method that needs no model trained for it, `--accept gsd`, the entropy-aware temperature and
`--batch`; the trace records the prompt and a W x H grid of codes; `vkspec bench --prompts`; and
bad input (an empty prompt, a class for a prompt model, methods that need draft heads or an
EAGLE drafter) fails with a message.

usage: test_generate_lumina.py VKSPEC_BINARY
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
CODES, GRID = 64, 4
METHODS = [("ar", []), ("sjd", []), ("scd-mc", ["--window", "8"]), ("scd-gs", []), ("sjd-pac", ["--window", "16"]),
           ("zipar", []), ("pjd", []), ("lantern", ["--k", "8"]), ("lantern", ["--lambda", "5", "--k", "8"]),
           ("scd-mc", ["--accept", "gsd"]), ("scd-mc", ["--entropy-temperature"]),
           ("scd-mc", ["--batch", "2"]), ("zipar", ["--verify", "exact"])]


def make_model(d):
    hf, vq = os.path.join(d, "hf"), os.path.join(d, "vq_released")
    ref = os.path.join(HERE, "reference.py")
    run([PY, ref, "make-lumina", hf, "--codes", str(CODES)])
    run([PY, ref, "make-chameleon-vq", vq, "--codebook", str(CODES)])
    conv = os.path.join(HERE, "convert_lumina.py")
    run([PY, conv, "--vqgan", vq, os.path.join(d, "chameleon_vqgan")])
    out = os.path.join(d, "lumina")
    run([PY, conv, hf, out, "--dtype", "f32", "--size", str(16 * GRID), "--prompt-tokens", "96",
         "--vq", "chameleon_vqgan.safetensors"])
    return out + ".safetensors"


def generate_every_method(vkspec, model, d):
    failures = []
    base = [vkspec, "generate", "--model", model, "--prompt", "a red ankle boot", "--images", "2"]
    for i, (method, extra) in enumerate(METHODS):
        trace, png = os.path.join(d, f"{i}.json"), os.path.join(d, f"{i}.png")
        run(base + ["--method", method, "--out", png, "--trace", trace] + extra)
        for im in json.load(open(trace))["images"]:
            rows = im["tokens"]
            tokens = [t for row in rows for t in row]
            if len(rows) != GRID or len(tokens) != GRID * GRID or not all(0 <= t < CODES for t in tokens):
                failures.append(f"{method} {extra}: tokens {rows}")
            if im.get("prompt") != "a red ankle boot":
                failures.append(f"{method} {extra}: the trace does not record the prompt: {im.get('prompt')}")
        if not os.path.exists(png):
            failures.append(f"{method} {extra}: no image decoded")
        print(f"{method} {' '.join(extra)}: 2 images from the prompt")
    return failures


def bench_prompts(vkspec, model, d):
    prompts = os.path.join(d, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("an ankle boot\na pair of trousers\n")
    out = os.path.join(d, "bench.json")
    run([vkspec, "bench", "--model", model, "--prompts", prompts, "--methods", "ar,scd-mc", "--images", "2",
         "--classifier", "none", "--json", out])
    names = [r["method"] for r in json.load(open(out))["results"]]
    return [] if names == ["ar", "scd-mc"] else [f"bench --prompts: runs {names}"]


def refusals(vkspec, model, d):
    g = [vkspec, "generate", "--model", model, "--out", os.path.join(d, "x.png")]
    return [
        (g + ["--prompt", "   "], "empty"),
        (g + ["--class", "1"], "--prompt"),
        (g + ["--prompt", "a boot", "--method", "hawk"], "head"),
        (g + ["--prompt", "a boot", "--method", "lantern++"], "EAGLE"),
    ]


def main():
    vkspec = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        model = make_model(d)
        failures += generate_every_method(vkspec, model, d)
        failures += bench_prompts(vkspec, model, d)
        for args, words in refusals(vkspec, model, d):
            r = run(args, expect_ok=False)
            if r.returncode not in (1, 2) or words not in r.stderr:
                failures.append(f"{' '.join(a[:40] for a in args[1:])}: exit {r.returncode}, expected an error "
                                f"with '{words}':\n{r.stderr}")
            else:
                print(f"refused: {r.stderr.strip().splitlines()[-1]}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
