#!/usr/bin/env python3
"""`--npz FILE` and `--out-dir DIR` of `vkspec generate` and `vkspec bench` on the shipped 8x8 model,
read back as the evaluation suites read them: numpy.load finds arr_0 (uint8 [N, H, W, 3], grey
repeated over the channels), tokens (int32 [N, 64]) and labels (int32 [N]); arr_0 equals the PNGs
of --out-dir, named seed000007_class3.png; tokens equal generate's --trace and bench's sample
files (--samples, also for images resumed from them), in seed order; bench writes one file and
one folder per run, and so does bench --report from the sample files; generate --shard 0/2 and
1/2 write the two blocks of the one-process run. Bad output paths fail before any image is
generated.

usage: test_sample_outputs.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import os
import struct
import sys
import tempfile
import zipfile
import zlib

from cli_run import run

try:
    import numpy as np
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: numpy is not installed for this python (apt-get install python3-numpy)")
    sys.exit(77)


def read_png(path):
    """8-bit grey or RGB, not interlaced (what stb_image_write writes): [H, W, C] uint8."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (0, 2) and interlace == 0, (path, depth, colour, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    c = 1 if colour == 0 else 3
    raw, stride = zlib.decompress(idat), w * c
    out = np.zeros((h, stride), np.int32)
    for y in range(h):
        f, row = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        up = out[y - 1] if y else np.zeros(stride, np.int32)
        for x in range(stride):
            a = out[y, x - c] if x >= c else 0
            b, d = up[x], (up[x - c] if x >= c else 0)
            if f == 0: pred = 0
            elif f == 1: pred = a
            elif f == 2: pred = b
            elif f == 3: pred = (a + b) // 2
            else:
                p = a + b - d
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - d)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else d)
            out[y, x] = (row[x] + pred) & 0xFF
    return out.astype(np.uint8).reshape(h, w, c)


def read_sample_file(path):
    """seed and tokens of a bench --samples file (safetensors)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]

    def tensor(name, dtype):
        t = header[name]
        b, e = t["data_offsets"]
        return np.frombuffer(data[b:e], dtype).reshape(t["shape"])
    return tensor("seed", np.int64), tensor("tokens", np.int32)


def streamed_arr_0(path):
    """arr_0 read the way guided-diffusion's evaluations/evaluator.py streams it: the entry opened
    inside the zip, the .npy 1.0 header parsed, the data read in batches."""
    with zipfile.ZipFile(path) as z, z.open("arr_0.npy") as f:
        assert np.lib.format.read_magic(f) == (1, 0)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        assert not fortran
        per_image = int(np.prod(shape[1:])) * dtype.itemsize
        batches = [f.read(2 * per_image) for _ in range((shape[0] + 1) // 2)]
        return np.frombuffer(b"".join(batches), dtype).reshape(shape)


def check_npz(path, seeds, labels, failures, tokens=None, pngs=None):
    """The layout, the labels, and arr_0 against tokens and PNGs where given."""
    where = os.path.basename(path)
    z = np.load(path)
    if sorted(z.files) != ["arr_0", "labels", "tokens"]:
        failures.append(f"{where}: arrays {z.files}")
        return None
    arr, tok, lab = z["arr_0"], z["tokens"], z["labels"]
    n = len(seeds)
    if arr.dtype != np.uint8 or arr.ndim != 4 or arr.shape[0] != n or arr.shape[3] != 3:
        failures.append(f"{where}: arr_0 {arr.dtype} {arr.shape}")
    if not np.array_equal(streamed_arr_0(path), arr):
        failures.append(f"{where}: arr_0 streamed as the ADM evaluator reads it differs from numpy.load's")
    if not ((arr[..., 0] == arr[..., 1]).all() and (arr[..., 0] == arr[..., 2]).all()):
        failures.append(f"{where}: a grey image's channels differ")
    if tok.dtype != np.int32 or tok.shape != (n, 64) or tok.min() < 0:
        failures.append(f"{where}: tokens {tok.dtype} {tok.shape}")
    if lab.dtype != np.int32 or lab.tolist() != labels:
        failures.append(f"{where}: labels {lab.dtype} {lab.tolist()}, expected {labels}")
    if tokens is not None and not np.array_equal(tok, tokens):
        failures.append(f"{where}: tokens differ from the record")
    if pngs is not None:
        names = sorted(os.listdir(pngs))
        expected = [f"seed{s:06d}_class{c}.png" for s, c in zip(seeds, labels)]
        if names != expected:
            failures.append(f"{where}: PNGs {names}, expected {expected}")
        for i, name in enumerate(expected):
            if name in names and not np.array_equal(read_png(os.path.join(pngs, name))[..., 0], arr[i, ..., 0]):
                failures.append(f"{where}: arr_0[{i}] differs from {name}")
    return z


def check_generate(vkspec, model, d, failures):
    trace = os.path.join(d, "g.json")
    run([vkspec, "generate", "--model", model, "--images", "5", "--seed", "3", "--npz", "g.npz", "--out-dir", "g",
         "--trace", trace], d)
    traced = np.array([[t for row in im["tokens"] for t in row] for im in json.load(open(trace))["images"]], np.int32)
    check_npz(os.path.join(d, "g.npz"), [3, 4, 5, 6, 7], [0, 1, 2, 3, 4], failures, traced, os.path.join(d, "g"))
    if os.path.exists(os.path.join(d, "out.png")):
        failures.append("generate --npz --out-dir also wrote the grid out.png")
    # --shard: the same five images as two processes make them (blocks 0-1 and 2-4), with the same
    # PNG names (so shards can share one --out-dir).
    names = []
    for i, (seeds, rows) in enumerate([([3, 4], slice(0, 2)), ([5, 6, 7], slice(2, 5))]):
        run([vkspec, "generate", "--model", model, "--images", "5", "--seed", "3", "--shard", f"{i}/2",
             "--npz", f"g{i}.npz", "--out-dir", f"gs{i}"], d)
        check_npz(os.path.join(d, f"g{i}.npz"), seeds, [k % 10 for k in range(rows.start, rows.stop)], failures,
                  traced[rows], os.path.join(d, f"gs{i}"))
        names += os.listdir(os.path.join(d, f"gs{i}"))
    if sorted(names) != sorted(os.listdir(os.path.join(d, "g"))):
        failures.append(f"generate --shard 0/2 and 1/2 --out-dir: {sorted(names)}")
    run([vkspec, "generate", "--model", model, "--images", "2", "--class", "7", "--npz", "c.npz", "--out", "c.png"], d)
    check_npz(os.path.join(d, "c.npz"), [0, 1], [7, 7], failures)
    if not os.path.exists(os.path.join(d, "c.png")):
        failures.append("generate --npz --out c.png: no grid")


def check_bench(vkspec, model, d, failures):
    base = [vkspec, "bench", "--model", model, "--classifier", "none", "--warmup", "0", "--seed", "8"]
    os.makedirs(os.path.join(d, "s"))
    run(base + ["--methods", "ar", "--images", "2", "--samples", "s"], d)
    # Two images resumed from the sample file, two new; written in seed order.
    run(base + ["--methods", "ar,sjd", "--images", "4", "--samples", "s", "--npz", "b.npz", "--out-dir", "b"], d)
    seeds, labels = [8, 9, 10, 11], [8, 9, 0, 1]
    for method in ("ar", "sjd"):
        s, t = read_sample_file(os.path.join(d, "s", f"{method}_seed8.safetensors"))
        check_npz(os.path.join(d, f"b_{method}.npz"), seeds, labels, failures, t[np.argsort(s)], os.path.join(d, "b", method))
    if sorted(os.listdir(os.path.join(d, "b"))) != ["ar", "sjd"]:
        failures.append(f"bench --out-dir b: folders {os.listdir(os.path.join(d, 'b'))}")
    # --report writes the merged sample files' images the same way.
    run([vkspec, "bench", "--report", "s", "--npz", "r.npz", "--out-dir", "r"], d)
    for method in ("ar", "sjd"):
        s, t = read_sample_file(os.path.join(d, "s", f"{method}_seed8.safetensors"))
        check_npz(os.path.join(d, f"r_{method}.npz"), seeds, labels, failures, t[np.argsort(s)], os.path.join(d, "r", method))


def check_bad_paths(vkspec, model, d, failures):
    open(os.path.join(d, "a_file"), "w").close()
    g = [vkspec, "generate", "--model", model]
    cases = [(g + ["--npz", "no/such/dir/x.npz"], "no/such/dir"),
             (g + ["--npz", d], "is a folder"),
             (g + ["--out-dir", "no/such/dir"], "no/such"),
             (g + ["--out-dir", "a_file"], "is a file"),
             ([vkspec, "bench", "--model", model, "--npz", "no/x.npz"], "--npz"),
             ([vkspec, "bench", "--model", model, "--out-dir", "a_file"], "--out-dir"),
             ([vkspec, "bench", "--report", "s", "--npz", "no/r.npz"], "--npz")]
    for args, words in cases:
        r = run(args, d, expect_ok=False)
        if r.returncode not in (1, 2) or words not in r.stderr or "images/s" in r.stderr:
            failures.append(f"{' '.join(args[1:])}: exit {r.returncode}, expected an error with '{words}' before any "
                            f"image:\n{r.stderr}")


def main():
    vkspec, assets = os.path.abspath(sys.argv[1]), sys.argv[2]
    model = os.path.abspath(os.path.join(assets, "fmnist_gpt8.safetensors"))
    failures = []
    with tempfile.TemporaryDirectory() as d:
        check_generate(vkspec, model, d, failures)
        check_bench(vkspec, model, d, failures)
        check_bad_paths(vkspec, model, d, failures)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("OK: generate and bench --npz/--out-dir read back with numpy; bad paths refused before generating")


if __name__ == "__main__":
    main()
