#!/usr/bin/env python3
"""Feeds the built binaries bad input and injected faults; checks each fails cleanly.

Every case must end with an exit code in 1..125 (an error the program reported, not a signal,
not a hang) and a message on stderr that contains the expected words, and, with the Khronos
validation layer on, without a validation message. Corrupt model files are made from the
shipped ones in a temporary folder. Prints a Markdown table (docs/reliability.md keeps one);
exits non-zero if any case misbehaves, so CTest runs it as `cli.faults`.

  tools/fault_table.py [--build build] [--assets assets] [--markdown FILE] [--only WORD]
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time


def read_st(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]


def write_st(path, header, data, header_bytes=None):
    h = header_bytes if header_bytes is not None else json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def make_files(assets, d):
    """Corrupt variants of the shipped GPT: name -> path."""
    src = os.path.join(assets, "fmnist_gpt16.safetensors")
    raw = open(src, "rb").read()
    hdr, data = read_st(src)
    out = {}

    def put(name, header=None, data_=None, header_bytes=None, blob=None):
        p = os.path.join(d, name + ".safetensors")
        if blob is not None:
            open(p, "wb").write(blob)
        else:
            write_st(p, header if header is not None else hdr, data if data_ is None else data_, header_bytes)
        out[name] = p

    def edited(fn):
        h = json.loads(json.dumps(hdr))
        fn(h)
        return h

    put("empty", blob=b"")
    put("seven_bytes", blob=raw[:7])
    put("truncated_half", blob=raw[:len(raw) // 2])
    put("header_longer_than_file", blob=struct.pack("<Q", len(raw) * 4) + raw[8:1000])
    put("header_not_json", header_bytes=b"{this is not json" + b" " * 64)
    put("random_bytes", blob=os.urandom(4096))
    put("offsets_past_end", edited(lambda h: h["output.weight"].__setitem__(
        "data_offsets", [h["output.weight"]["data_offsets"][0], len(data) + 4096])))
    put("offsets_reversed", edited(lambda h: h["output.weight"].__setitem__(
        "data_offsets", h["output.weight"]["data_offsets"][::-1])))
    put("wrong_dtype", edited(lambda h: h["norm.weight"].__setitem__("dtype", "I64")))
    put("unknown_dtype", edited(lambda h: h["norm.weight"].__setitem__("dtype", "F12")))
    put("missing_tensor", edited(lambda h: h.pop("output.weight")))
    put("shape_vs_metadata", edited(lambda h: h["__metadata__"].__setitem__("dim", "320")))
    put("vocab_vs_metadata", edited(lambda h: h["__metadata__"].__setitem__("vocab_size", "2048")))
    put("absurd_shape", edited(lambda h: h["norm.weight"].__setitem__("shape", [1 << 40, 1 << 40])))
    put("absurd_metadata", edited(lambda h: h["__metadata__"].__setitem__("n_layer", "100000000")))
    put("metadata_not_number", edited(lambda h: h["__metadata__"].__setitem__("n_head", "four")))
    put("missing_kind", edited(lambda h: h["__metadata__"].pop("vkspec.kind")))
    nan = bytearray(data)
    o0, o1 = hdr["output.weight"]["data_offsets"]
    assert hdr["output.weight"]["dtype"] == "F16"
    nan[o0 + 1000:o0 + 1002] = b"\x00\x7e"  # one f16 NaN in the output projection
    put("nan_weights", data_=bytes(nan))
    trace = os.path.join(d, "trace_lies.json")
    json.dump({"format": "vkspec-trace", "version": 1, "config": {"grid": 16}, "steps": [{"positions": [999]}]},
              open(trace, "w"))
    out["trace_lies"] = trace
    open(os.path.join(d, "trace_garbage.json"), "w").write("[[[{\"")
    out["trace_garbage"] = os.path.join(d, "trace_garbage.json")
    # A bench sample file of one ar image made with another model, where `bench --samples` would
    # resume from it.
    os.makedirs(os.path.join(d, "samples"))
    meta = {"format": "vkspec-samples-1", "method": "ar", "options": "", "models": "target=other.safetensors#0",
            "sampler": "cfg 2", "classifier": "none", "device": "somewhere"}
    cols = [("seed", "I64", [1], struct.pack("<q", 0)), ("class", "I64", [1], struct.pack("<q", 0)),
            ("predicted", "I64", [1], struct.pack("<q", -1)), ("nfe", "I64", [1], struct.pack("<q", 256)),
            ("draft_forwards", "I64", [1], struct.pack("<q", 0)), ("islands", "I64", [1], struct.pack("<q", 0)),
            ("work", "I64", [1, 4], struct.pack("<4q", 0, 0, 0, 0)), ("tokens", "I32", [1, 256], bytes(1024)),
            ("features", "F32", [1, 0], b""), ("wall_ms", "F32", [1], struct.pack("<f", 1)),
            ("busy_ms", "F32", [1], struct.pack("<f", 1)), ("device_ms", "F32", [1], struct.pack("<f", 0))]
    header, blob = {"__metadata__": meta}, b""
    for name, dtype, shape, raw_ in cols:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw_)]}
        blob += raw_
    out["samples_dir"] = os.path.join(d, "samples")
    write_st(os.path.join(d, "samples", "ar_seed0.safetensors"), header, blob)
    bad = json.loads(json.dumps(header))
    bad["tokens"]["shape"] = [2, 128]
    write_st(os.path.join(d, "samples_rows.safetensors"), bad, blob)
    out["samples_rows"] = os.path.join(d, "samples_rows.safetensors")
    # Shard 0 of a 2-shard run whose shard 1 never wrote a file.
    part = json.loads(json.dumps(header))
    part["__metadata__"]["run_seeds"] = "0+2 shards 2"
    os.makedirs(os.path.join(d, "samples_partial"))
    write_st(os.path.join(d, "samples_partial", "ar_seed0.safetensors"), part, blob)
    out["samples_partial"] = os.path.join(d, "samples_partial")
    return out


def cases(f, assets):
    """(group, what is wrong, argv after the binary name, extra env, expected words in stderr)."""
    g = lambda *a: ["generate", "--images", "1", "--out", "{tmp}/out.png"] + list(a)
    A = lambda n: os.path.join(assets, n)
    yield "model file", "file does not exist", g("--model", "{tmp}/nope.safetensors"), {}, "nope.safetensors"
    for name, words in [("empty", "empty"), ("seven_bytes", "seven_bytes"), ("truncated_half", "truncated_half"),
                        ("header_longer_than_file", "header"), ("header_not_json", "json"),
                        ("random_bytes", "random_bytes"), ("offsets_past_end", "output.weight"),
                        ("offsets_reversed", "output.weight"), ("wrong_dtype", "norm.weight"),
                        ("unknown_dtype", "F12"), ("missing_tensor", "output.weight"),
                        ("shape_vs_metadata", "shape"), ("vocab_vs_metadata", "shape"),
                        ("absurd_shape", "norm.weight"), ("absurd_metadata", "n_layer"),
                        ("metadata_not_number", "n_head"), ("nan_weights", "nan")]:
        yield "model file", name.replace("_", " "), g("--model", f[name]), {}, words
    # LlamaGen checkpoints converted by other tools lack the tag; the tensors then decide.
    yield "model file", "no vkspec.kind tag (accepted: tensors decide)", g("--model", f["missing_kind"]), {}, "OK"
    yield "model file", "VQ tokenizer given as --model", g("--model", A("fmnist_vq.safetensors")), {}, "gpt"
    yield "model file", "GPT given as --vq", g("--vq", A("fmnist_gpt16.safetensors")), {}, "vq"
    yield "model file", "classifier given as --model", g("--model", A("fmnist_classifier.safetensors")), {}, "gpt"
    yield "model file", "truncated --drafter (sd)", g("--method", "sd", "--drafter", f["truncated_half"]), {}, "truncated_half"
    yield "model file", "truncated --heads (hawk)", g("--method", "hawk", "--heads", f["truncated_half"]), {}, "truncated_half"
    yield "model file", "truncated --low-res (mulo)", g("--method", "mulo", "--low-res", f["truncated_half"]), {}, "truncated_half"
    yield "model file", "drafter with another vocabulary", g("--method", "sd", "--drafter", f["vocab_vs_metadata"]), {}, "shape"
    yield "option", "unknown command", ["frobnicate"], {}, "unknown command"
    yield "option", "unknown method", g("--method", "fast"), {}, "fast"
    yield "option", "unknown option", g("--colour", "red"), {}, "--colour"
    yield "option", "option without its value", g("--class"), {}, "--class"
    yield "option", "option of another method", g("--method", "ar", "--window", "8"), {}, "--window"
    yield "option", "class 10 (model has 10)", g("--class", "10"), {}, "--class"
    yield "option", "class -1", g("--class", "-1"), {}, "--class"
    yield "option", "seed not a number", g("--seed", "abc"), {}, "--seed"
    yield "option", "negative temperature", g("--temperature", "-1"), {}, "--temperature"
    yield "option", "NaN temperature", g("--temperature", "nan"), {}, "--temperature"
    yield "option", "infinite cfg", g("--cfg", "inf"), {}, "--cfg"
    yield "option", "top-k 0", g("--top-k", "-1"), {}, "--top-k"
    yield "option", "top-p 0", g("--top-p", "0"), {}, "--top-p"
    yield "option", "top-p 1.5", g("--top-p", "1.5"), {}, "--top-p"
    yield "option", "0 images", g("--images", "0"), {}, "--images"
    yield "option", "--shard past the last shard", g("--shard", "1/1"), {}, "--shard 1/1"
    yield "option", "--shard not I/N", g("--shard", "2"), {}, "--shard"
    yield "option", "--shard more shards than images", g("--shard", "0/2"), {}, "2 shards"
    yield "option", "bench --shard negative", ["bench", "--shard", "-1/4"], {}, "--shard"
    yield "option", "window 0", g("--method", "sjd", "--window", "0"), {}, "window"
    yield "option", "window larger than the grid", g("--method", "sjd", "--window", "100000"), {}, "window"
    yield "option", "zipar window larger than a row", g("--method", "zipar", "--window", "17"), {}, "window"
    yield "option", "bad --init", g("--method", "sjd", "--init", "zeros"), {}, "zeros"
    yield "option", "bad --verify", g("--method", "zipar", "--verify", "maybe"), {}, "maybe"
    yield "option", "LANTERN delta 2", g("--method", "lantern", "--delta", "2"), {}, "delta"
    yield "option", "LANTERN k 0", g("--method", "lantern", "--k", "0"), {}, "--k"
    yield "option", "MuLo tau -0.5", g("--method", "mulo", "--tau", "-0.5"), {}, "tau"
    yield "option", "ssd rounds -1", g("--method", "ssd", "--rounds", "-1"), {}, "rounds"
    yield "option", "bench: empty method list", ["bench", "--methods", ","], {}, "methods"
    yield "option", "bench: sweep without values", ["bench", "--sweep", "window="], {}, "sweep"
    yield "option", "bench: sweep of an unknown key", ["bench", "--methods", "sjd", "--sweep", "colour=1,2"], {}, "colour"
    syn = lambda *a: ["bench", "--synthetic"] + list(a)
    yield "option", "bench --synthetic: unknown shape", syn("XXXL"), {}, "XXXL"
    yield "option", "bench --synthetic: grid 20", syn("tiny", "--grid", "20"), {}, "--grid"
    yield "option", "bench --synthetic: window past the image", syn("tiny", "--windows", "1,200"), {}, "--windows"
    yield "option", "bench --synthetic: window list garbage", syn("tiny", "--windows", "4,x"), {}, "--windows"
    yield "option", "bench --synthetic with --methods", syn("tiny", "--methods", "ar"), {}, "--methods"
    rep = lambda *a: ["bench", "--report"] + list(a)
    yield "sample file", "bench --report of a missing path", rep("{tmp}/nope"), {}, "nope"
    yield "sample file", "bench --report of a model file", rep(A("fmnist_gpt16.safetensors")), {}, "not a vkspec sample file"
    yield "sample file", "bench --report of a truncated file", rep(f["truncated_half"]), {}, "truncated_half"
    yield "sample file", "bench --report: rows disagree", rep(f["samples_rows"]), {}, "tokens"
    yield "sample file", "bench --report with --images", rep(f["samples_dir"], "--images", "5"), {}, "--images"
    yield "sample file", "bench --report of a run missing a shard", rep(f["samples_partial"]), {}, "seeds 1 (shard 1/2)"
    yield "sample file", "bench --samples: folder missing", ["bench", "--samples", "{tmp}/no/such"], {}, "--samples"
    yield "sample file", "bench --samples: file of other settings", ["bench", "--images", "1", "--samples",
                                                                     f["samples_dir"]], {}, "other settings"
    v = lambda t: ["@viewer", "--trace", t, "--screenshot", "{tmp}/v.png", "--frames", "2"]
    yield "trace file", "viewer: trace file missing", v("{tmp}/nope.json"), {}, "nope.json"
    yield "trace file", "viewer: trace not JSON", v(f["trace_garbage"]), {}, "trace_garbage.json"
    yield "trace file", "viewer: trace names a cell outside the grid", v(f["trace_lies"]), {}, "trace_lies.json"
    yield "output", "--out in a missing folder", g("--out", "{tmp}/no/such/dir/x.png"), {}, "no/such/dir"
    yield "output", "--trace in a missing folder", g("--trace", "{tmp}/no/such/dir/t.json"), {}, "no/such/dir"
    yield "output", "--out is a folder", g("--out", "{tmp}"), {}, "is a folder"
    yield "output", "bench --json in a missing folder", ["bench", "--json", "{tmp}/no/b.json"], {}, "does not exist"
    yield "output", "--npz in a missing folder", g("--npz", "{tmp}/no/such/dir/x.npz"), {}, "no/such/dir"
    yield "output", "--out-dir under a missing folder", g("--out-dir", "{tmp}/no/such/dir"), {}, "no/such"
    yield "output", "--out-dir is a file", g("--out-dir", f["empty"]), {}, "is a file"
    yield "output", "bench --npz in a missing folder", ["bench", "--npz", "{tmp}/no/b.npz"], {}, "does not exist"
    yield "environment", "no Vulkan driver", ["devices"], {"VK_DRIVER_FILES": "{tmp}/none.json",
                                                        "VK_ICD_FILENAMES": "{tmp}/none.json"}, "vulkan"
    yield "environment", "VKSPEC_DEVICE out of range", g(), {"VKSPEC_DEVICE": "7"}, "VKSPEC_DEVICE"
    yield "environment", "VKSPEC_DEVICE garbage", g(), {"VKSPEC_DEVICE": "gpu"}, "VKSPEC_DEVICE"
    yield "fault", "out of device memory (cap 8 MiB)", g(), {"VKSPEC_MAX_DEVICE_MEMORY": "8M"}, "device memory"
    yield "fault", "fence timeout (0 ms)", g(), {"VKSPEC_FENCE_TIMEOUT_MS": "0"}, "did not finish"
    # --devices 0,0: the faults in both workers at once; the first worker's error, naming its device.
    yield "fault", "out of device memory on two devices", g("--devices", "0,0"), {"VKSPEC_MAX_DEVICE_MEMORY": "8M"}, "device 0 ("
    yield "fault", "fence timeout on two devices", g("--devices", "0,0"), {"VKSPEC_FENCE_TIMEOUT_MS": "0"}, "did not finish"
    yield "option", "--devices past the devices present", g("--devices", "0,7"), {}, "no device 7"
    yield "fault", "bench --synthetic XL over a 512 MiB cap", syn("XL"), {"VKSPEC_MAX_DEVICE_MEMORY": "512M"}, "device memory"
    yield "fault", "cache folder unusable", g("--method", "lantern"), {"VKSPEC_CACHE_DIR": "/proc/vkspec"}, "OK"


def run_case(binary, args, env_extra, tmp, timeout):
    env = dict(os.environ, VKSPEC_VALIDATION="1", VKSPEC_VALIDATION_PRINT="1")
    env.update({k: v.replace("{tmp}", tmp) for k, v in env_extra.items()})
    args = [a.replace("{tmp}", tmp) for a in args]
    if args[0] == "@viewer":  # the viewer needs a display even to report a bad file
        viewer = os.path.join(os.path.dirname(os.path.dirname(binary)), "viewer", "vkspec-viewer")
        argv = ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", viewer] + args[1:]
    else:
        argv = [binary] + args
    t0 = time.time()
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, err, timeout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--assets", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets"))
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    binary = os.path.join(a.build, "cli", "vkspec")
    assets = os.path.abspath(a.assets)
    # A tree configured without the viewer (VKSPEC_BUILD_VIEWER=OFF, e.g. the sanitizer build)
    # skips the viewer's cases instead of failing them.
    has_viewer = os.path.exists(os.path.join(a.build, "viewer", "vkspec-viewer"))
    rows, bad, skipped = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(assets, tmp)
        for group, what, args, env, words in cases(files, assets):
            if a.only and a.only not in what:
                continue
            if args[0] == "@viewer" and not has_viewer:
                skipped += 1
                print(f"skip [{group}] {what}: no viewer in {a.build}")
                continue
            rc, err, secs = run_case(binary, args, env, tmp, a.timeout)
            lines = [l for l in err.strip().splitlines() if l.strip()]
            msg = next((l for l in lines if ": error: " in l), lines[-1] if lines else "")
            # The Khronos layer's own reports (the loader's notes share the messenger and are fine).
            validation = any(w in err for w in ("Validation Error", "Validation Warning", "VUID-", "SYNC-HAZARD"))
            if words == "OK":  # the fault must not stop the run at all
                ok = rc == 0 and not validation
            else:
                ok = rc is not None and 1 <= rc <= 125 and words.lower() in err.lower() and not validation
            bad += not ok
            shown = "timeout" if rc is None else (f"signal {-rc}" if rc < 0 else str(rc))
            rows.append((group, what, shown, msg.replace("|", "\\|")[:160], "ok" if ok else "**FAIL**", secs))
            print(f"{'ok  ' if ok else 'FAIL'} [{group}] {what}: exit {shown}, {secs:.1f} s: {msg[:200]}", flush=True)
            if not ok:
                print("    expected words: " + words + "\n    stderr:\n" + "\n".join("      " + l for l in lines[-12:]))
    md = ["| input or fault | what was wrong | exit | message | result |", "|---|---|---|---|---|"]
    md += [f"| {g} | {w} | {r} | {m} | {o} |" for g, w, r, m, o, _ in rows]
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write("\n".join(md) + "\n")
    print(f"{len(rows) - bad}/{len(rows)} cases failed cleanly with the expected message"
          + (f" ({skipped} viewer cases skipped)" if skipped else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
