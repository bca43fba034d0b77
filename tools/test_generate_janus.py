#!/usr/bin/env python3
"""Janus-Pro end to end through the CLI: a random tiny Janus-Pro checkpoint folder in the released
layout (tools/reference.py make-janus, with its VQ decoder), converted by tools/convert_janus.py,
then `vkspec generate --prompt` with every method that needs no model trained for it (neighbours
from the VQ's codebook; LANTERN++'s relaxation as `lantern --lambda`), `--accept gsd`, the
entropy-aware temperature and `--batch`; the trace
records the prompt; `vkspec bench --prompts FILE` with labelled and unlabelled prompts; and bad
input (empty, over-long and missing prompts, a class for a prompt model, a prompt for a class
model, a tokenizer that is not the model's, methods whose draft heads or EAGLE drafter would be
the shipped ones trained on LlamaGen) fails with a message.

usage: test_generate_janus.py VKSPEC_BINARY
"""
import json
import os
import shutil
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
METHODS = [("ar", []), ("sjd", []), ("scd-mc", ["--window", "8"]), ("scd-gs", []), ("sjd-pac", ["--window", "16"]),
           ("zipar", []), ("pjd", []), ("lantern", ["--k", "8"]), ("lantern", ["--lambda", "5", "--k", "8"]),
           ("scd-mc", ["--accept", "gsd"]), ("scd-mc", ["--entropy-temperature"]),
           ("scd-mc", ["--batch", "2"]), ("zipar", ["--verify", "exact"])]


def make_model(d):
    hf, out = os.path.join(d, "hf"), os.path.join(d, "janus")
    run([PY, os.path.join(HERE, "reference.py"), "make-janus", hf, "--dim", "64", "--layers", "2", "--heads", "4",
         "--image-vocab", "64", "--grid", "4", "--vq"])
    run([PY, os.path.join(HERE, "convert_janus.py"), hf, out, "--dtype", "f32", "--prompt-tokens", "24"])
    return out + ".safetensors"


def generate_every_method(vkspec, model, d):
    failures = []
    base = [vkspec, "generate", "--model", model, "--prompt", "a red ankle boot", "--images", "2"]
    for i, (method, extra) in enumerate(METHODS):
        trace = os.path.join(d, f"{i}.json")
        run(base + ["--method", method, "--out", os.path.join(d, f"{i}.png"), "--trace", trace] + extra)
        for im in json.load(open(trace))["images"]:
            tokens = [t for row in im["tokens"] for t in row]
            if len(tokens) != 16 or not all(0 <= t < 64 for t in tokens):
                failures.append(f"{method} {extra}: tokens {tokens}")
            if im.get("prompt") != "a red ankle boot" or "class" in im:
                failures.append(f"{method} {extra}: the trace does not record the prompt: {im.get('prompt')}")
        print(f"{method} {' '.join(extra)}: 2 images from the prompt")
    return failures


def generate_flashar(vkspec, model, d):
    """`--method flashar` with a random FlashAR on the tiny model (reference.py make-flashar: the
    branch's head a gen_head MLP), two images in one batch: 2W - 1 = 7 forwards each."""
    flashar = os.path.join(d, "flashar.safetensors")
    run([PY, os.path.join(HERE, "reference.py"), "make-flashar", flashar, "--gpt", model])
    trace = os.path.join(d, "flashar.json")
    run([vkspec, "generate", "--model", model, "--flashar", flashar, "--method", "flashar", "--prompt",
         "a red ankle boot", "--images", "2", "--batch", "2", "--out", os.path.join(d, "flashar.png"), "--trace", trace])
    failures = []
    for im in json.load(open(trace))["images"]:
        tokens = [t for row in im["tokens"] for t in row]
        if len(tokens) != 16 or not all(0 <= t < 64 for t in tokens) or im.get("nfe") != 7:
            failures.append(f"flashar: tokens {tokens}, nfe {im.get('nfe')}")
    print("flashar --batch 2: 2 images from the prompt in 7 forwards each")
    return failures


def bench_prompts(vkspec, model, d):
    prompts = os.path.join(d, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("9\tan ankle boot\n\n1\ta pair of trousers\na bag with no class\n")
    out = os.path.join(d, "bench.json")
    os.makedirs(os.path.join(d, "samples"), exist_ok=True)
    run([vkspec, "bench", "--model", model, "--prompts", prompts, "--methods", "ar,scd-mc", "--images", "3",
         "--classifier", "none", "--json", out, "--samples", os.path.join(d, "samples")])
    j = json.load(open(out))
    names = [r["method"] for r in j["results"]]
    return [] if names == ["ar", "scd-mc"] else [f"bench --prompts: runs {names}"]


def refusals(vkspec, model, d):
    wrong_tok = os.path.join(d, "wrong")
    os.makedirs(wrong_tok, exist_ok=True)
    for f in ("janus.safetensors", "janus.vq.safetensors"):
        shutil.copy(os.path.join(d, f), wrong_tok)
    shutil.copy(os.path.join(HERE, "..", "tests", "data", "tiny_bytelevel_tokenizer.json"),
                os.path.join(wrong_tok, "janus.tokenizer.json"))
    empty = os.path.join(d, "empty.txt")
    open(empty, "w").close()
    g = [vkspec, "generate", "--model", model, "--out", os.path.join(d, "x.png")]
    return [
        (g + ["--prompt", "   "], "empty"),
        (g + ["--prompt", "boot " * 100], "tokens"),
        (g, "--prompt"),
        (g + ["--class", "1"], "--prompt"),
        (g + ["--prompt", "a boot", "--class", "1"], "exclude each other"),
        (g + ["--prompt", "a boot", "--method", "hawk"], "head"),
        (g + ["--prompt", "a boot", "--method", "lantern++"], "EAGLE"),
        ([vkspec, "generate", "--model", os.path.join(HERE, "..", "assets", "fmnist_gpt16.safetensors"), "--prompt",
          "a boot", "--out", os.path.join(d, "y.png")], "class"),
        ([vkspec, "generate", "--model", os.path.join(wrong_tok, "janus.safetensors"), "--prompt", "a boot"],
         "tokenizer"),
        ([vkspec, "bench", "--model", model, "--methods", "ar", "--images", "1", "--classifier", "none"], "--prompts"),
        ([vkspec, "bench", "--model", model, "--prompts", empty, "--methods", "ar", "--images", "1",
          "--classifier", "none"], "no prompt"),
    ]


def shipped_prompt_model(vkspec, d):
    """`generate --prompt` without --model: the shipped prompt model, where assets/ has it."""
    if not os.path.exists(os.path.join(HERE, "..", "assets", "fmnist_janus.safetensors")):
        print("no shipped prompt model in assets/: not checked")
        return []
    trace = os.path.join(d, "shipped.json")
    run([vkspec, "generate", "--prompt", "an ankle boot", "--images", "1", "--out", os.path.join(d, "shipped.png"),
         "--trace", trace])
    im = json.load(open(trace))["images"][0]
    ok = im.get("prompt") == "an ankle boot" and len([t for row in im["tokens"] for t in row]) == 256
    failures = [] if ok else [f"the shipped prompt model: {im.get('prompt')}, {len(im['tokens'])} rows"]
    if os.path.exists(os.path.join(HERE, "..", "assets", "fmnist_janus_flashar.safetensors")):
        # its FlashAR companion, found with no --flashar: one forward per anti-diagonal
        run([vkspec, "generate", "--prompt", "an ankle boot", "--method", "flashar", "--images", "1", "--out",
             os.path.join(d, "shipped_flashar.png"), "--trace", trace])
        im = json.load(open(trace))["images"][0]
        if im.get("nfe") != 31:
            failures.append(f"the shipped prompt model's flashar: {im.get('nfe')} forwards, not 31")
    return failures


def main():
    vkspec = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        failures += shipped_prompt_model(vkspec, d)
        model = make_model(d)
        failures += generate_every_method(vkspec, model, d)
        failures += generate_flashar(vkspec, model, d)
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
