#!/usr/bin/env python3
"""`--batch` through the CLI on the shipped 8x8 model: generate --batch 3 writes the tokens that
--batch 1 writes (traces compared image by image), for ar, for scd-mc under GSD's lossy rule
(continuous batching: 5 images in 2 lanes), for sjd-pac and for zipar (3 images in 2 lanes), and for
flashar and vvs (3 images in 2 lanes) on the shipped 16x16 model (the FlashAR file refused beside
the 8x8 target); bench --sweep
batch=1,3 makes a row per batch size for ar and sjd and one for pjd (which decodes one image per forward), with
images/s and the
batch in its JSON, and keeps each batch size's images in a sample file of its own that a second
command resumes; --batch with a method that cannot batch, or out of range, is refused with the
reason.

usage: test_batch_cli.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import os
import sys
import tempfile

from cli_run import run


def tokens_of(trace):
    with open(trace) as f:
        return [(im["seed"], im["tokens"]) for im in json.load(f)["images"]]


def main():
    vkspec, assets = sys.argv[1], sys.argv[2]
    model = ["--model", os.path.join(assets, "fmnist_gpt8.safetensors")]
    with tempfile.TemporaryDirectory() as d:
        base = [vkspec, "generate", "--images", "4", "--seed", "5"] + model
        run(base + ["--batch", "3", "--out", f"{d}/b3.png", "--trace", f"{d}/b3.json"])
        run(base + ["--out", f"{d}/b1.png", "--trace", f"{d}/b1.json"])
        if tokens_of(f"{d}/b3.json") != tokens_of(f"{d}/b1.json"):
            sys.exit("FAIL: generate --batch 3 wrote other tokens than --batch 1")
        gsd = [vkspec, "generate", "--method", "scd-mc", "--accept", "gsd", "--window", "6", "--images", "5",
               "--seed", "9"] + model
        run(gsd + ["--batch", "2", "--out", f"{d}/g2.png", "--trace", f"{d}/g2.json"])
        run(gsd + ["--out", f"{d}/g1.png", "--trace", f"{d}/g1.json"])
        if tokens_of(f"{d}/g2.json") != tokens_of(f"{d}/g1.json"):
            sys.exit("FAIL: scd-mc --accept gsd --batch 2 wrote other tokens than --batch 1")
        pac = [vkspec, "generate", "--method", "sjd-pac", "--width", "2", "--depth", "2", "--window", "7", "--images",
               "3", "--seed", "2"] + model
        run(pac + ["--batch", "2", "--out", f"{d}/p2.png", "--trace", f"{d}/p2.json"])
        run(pac + ["--out", f"{d}/p1.png", "--trace", f"{d}/p1.json"])
        if tokens_of(f"{d}/p2.json") != tokens_of(f"{d}/p1.json"):
            sys.exit("FAIL: sjd-pac --batch 2 wrote other tokens than --batch 1")
        zipar = [vkspec, "generate", "--method", "zipar", "--window", "2", "--images", "3", "--seed", "4"] + model
        run(zipar + ["--batch", "2", "--out", f"{d}/z2.png", "--trace", f"{d}/z2.json"])
        run(zipar + ["--out", f"{d}/z1.png", "--trace", f"{d}/z1.json"])
        if tokens_of(f"{d}/z2.json") != tokens_of(f"{d}/z1.json"):
            sys.exit("FAIL: zipar --batch 2 wrote other tokens than --batch 1")

        # flashar on the shipped 16x16 model (its FlashAR file is post-trained from it), lockstep.
        flash = [vkspec, "generate", "--method", "flashar", "--images", "3", "--seed", "6"]
        run(flash + ["--batch", "2", "--out", f"{d}/f2.png", "--trace", f"{d}/f2.json"])
        run(flash + ["--out", f"{d}/f1.png", "--trace", f"{d}/f1.json"])
        if tokens_of(f"{d}/f2.json") != tokens_of(f"{d}/f1.json"):
            sys.exit("FAIL: flashar --batch 2 wrote other tokens than --batch 1")
        # vvs on the shipped 16x16 model and its EAGLE drafter: 3 images in 2 lanes, rounds skipped
        # in one lane while the other verifies.
        vvs = [vkspec, "generate", "--method", "vvs", "--depth", "4", "--nodes", "12", "--images", "3", "--seed", "8"]
        run(vvs + ["--batch", "2", "--out", f"{d}/v2.png", "--trace", f"{d}/v2.json"])
        run(vvs + ["--out", f"{d}/v1.png", "--trace", f"{d}/v1.json"])
        if tokens_of(f"{d}/v2.json") != tokens_of(f"{d}/v1.json"):
            sys.exit("FAIL: vvs --batch 2 wrote other tokens than --batch 1")

        os.mkdir(f"{d}/samples")
        bench = [vkspec, "bench", "--methods", "ar,sjd,pjd", "--sweep", "batch=1,3", "--images", "3", "--warmup", "0",
                 "--classifier", "none", "--samples", f"{d}/samples", "--json", f"{d}/bench.json"] + model
        run(bench)
        with open(f"{d}/bench.json") as f:
            rows = [(r["method"], r["batch"], r["images_per_s"]) for r in json.load(f)["results"]]
        if [(m, b) for m, b, _ in rows] != [("ar", 1), ("ar", 3), ("sjd", 1), ("sjd", 3), ("pjd", 1)]:
            sys.exit(f"FAIL: bench --sweep batch=1,3 ran {rows}")
        if not all(ips and ips > 0 for _, _, ips in rows):
            sys.exit(f"FAIL: images/s missing: {rows}")
        files = sorted(os.listdir(f"{d}/samples"))
        if "ar_batch=3_seed0.safetensors" not in files or "ar_seed0.safetensors" not in files:
            sys.exit(f"FAIL: sample files {files}")
        again = run(bench)
        if "ar batch=3: 3 images already in" not in again.stderr:
            sys.exit(f"FAIL: the batch run did not resume from its file:\n{again.stderr}")

        for args, says in [
            (["generate", "--method", "pjd", "--batch", "2"], "pjd decodes one image per forward"),
            (["bench", "--methods", "ar,pjd", "--batch", "2", "--images", "2"], "pjd decodes one image per forward"),
            (["generate", "--method", "zipar", "--verify", "exact", "--batch", "2", "--images", "2"],
             "zipar --verify decodes one image"),
            (["generate", "--batch", "0"], "--batch"),
            (["generate", "--method", "flashar"], "was not post-trained from the target"),
            (["bench", "--sweep", "batch=1,x"], "not a batch size"),
            (["bench", "--batch", "2", "--sweep", "batch=1,2"], "both given and swept"),
        ]:
            r = run([vkspec] + args + model + ["--out", f"{d}/x.png"] * (args[0] == "generate"), expect_ok=False)
            if r.returncode == 0 or says not in r.stderr:
                sys.exit(f"FAIL: vkspec {' '.join(args)}: exit {r.returncode}, expected an error with '{says}'\n{r.stderr}")
    print("ok: --batch gives batch 1's tokens, bench sweeps and resumes batch sizes, bad uses refused")


if __name__ == "__main__":
    main()
