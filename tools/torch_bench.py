#!/usr/bin/env python3
"""PyTorch side of `vkspec bench --synthetic`: the same LlamaGen-shaped GPT, timed the same way.

Our own reference model (`vkspec_models.GPT`) with random weights at LlamaGen's B/L/XL shapes,
f16 on a GPU and f32 on the CPU, two batch rows (classifier-free guidance), a KV cache holding
the first half of the image. Each timed step is what a decoding step does: the forward over 1
query (AR step) or a window of queries, the CFG combine, LlamaGen's sampler (top-k 2000) and a
token per query. Eager with the model's KV cache (it appends with torch.cat, so each step also
copies the cache: a few percent of the weight traffic), then `torch.compile` when this PyTorch
has it (a failure is reported, not fatal). The JSON uses the C++ bench's field names; with
`--compare VKSPEC_JSON` it prints vkspec's time over PyTorch's per forward.

  tools/torch_bench.py --shape B [--grid 16|24] [--windows 1,4,16,32,64] [--repeat N]
                       [--device cuda|cpu] [--no-compile] [--json FILE] [--compare vkspec.json]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vkspec_models import GPT, GPTConfig, filter_logits  # noqa: E402

# (dim, n_layer, n_head, vocab, classes): LlamaGen's GPT_B/L/XL; tiny matches vkspec's test shape.
SHAPES = {"B": (768, 12, 12, 16384, 1000), "L": (1024, 24, 16, 16384, 1000),
          "XL": (1280, 36, 20, 16384, 1000), "tiny": (64, 2, 2, 512, 10)}
# LlamaGen's default sampler, which the C++ bench's generated models also carry.
CFG_SCALE, TEMPERATURE, TOP_K, TOP_P = 4.0, 1.0, 2000, 1.0


def make_model(shape, grid, device, dtype, seed):
    dim, n_layer, n_head, vocab, classes = SHAPES[shape]
    cfg = GPTConfig(dim=dim, n_layer=n_layer, n_head=n_head, vocab_size=vocab, num_classes=classes,
                    grid_size=grid)
    torch.manual_seed(seed)
    model = GPT(cfg)
    torch.nn.init.normal_(model.output.weight, std=0.02)  # GPT() zeroes it; timing wants real logits
    return model.to(device=device, dtype=dtype).eval()


def make_step(model):
    """One decoding step: forward over `tokens` [2, w] at positions `pos` [w] after the cached
    prefix, CFG combine, filter, softmax, one token per query."""
    def step(tokens, pos, prefix):
        caches = [{"k": k, "v": v} for k, v in prefix]
        h = model.hidden(model.tok_embeddings(tokens), pos, caches=caches)
        logits = model.output(h).float()
        c, u = logits.chunk(2)
        logits = u + CFG_SCALE * (c - u)
        probs = filter_logits(logits / max(TEMPERATURE, 1e-5), TOP_K, TOP_P).softmax(-1)
        return torch.multinomial(probs.flatten(0, 1), 1)
    return step


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_step(step, model, first, queries, repeat, device, dtype):
    """Median ms of `repeat` steps (after two untimed ones) with `queries` queries per row at
    sequence positions [first, first + queries), the cache holding positions [0, first)."""
    cfg = model.cfg
    g = torch.Generator(device="cpu").manual_seed(1)
    prefix = [(torch.randn(2, cfg.n_head, first, cfg.head_dim, generator=g).to(device, dtype),
               torch.randn(2, cfg.n_head, first, cfg.head_dim, generator=g).to(device, dtype))
              for _ in range(cfg.n_layer)]
    tokens = torch.randint(0, cfg.vocab_size, (2, queries), generator=g).to(device)
    pos = torch.arange(first, first + queries, device=device)
    ms, busy = [], []
    for i in range(repeat + 2):
        sync(device)
        t0, c0 = time.perf_counter(), time.process_time()
        step(tokens, pos, prefix)
        sync(device)
        if i >= 2:
            ms.append((time.perf_counter() - t0) * 1e3)
            busy.append((time.process_time() - c0) * 1e3)
    # busy_ms: CPU time of this process (all threads); on the CPU the work itself, which a busy
    # machine inflates less than wall time (the C++ bench reports the same).
    return {"queries": queries, "kv_len": first + queries, "ms": statistics.median(ms), "wall_ms": statistics.median(ms),
            "busy_ms": statistics.median(busy)}


def run(impl, step, model, args, device, dtype):
    tokens = args.grid * args.grid
    first = 1 + tokens // 2  # as the C++ bench: the AR query sees half the image
    with torch.inference_mode():
        ar = time_step(step, model, first, 1, args.repeat, device, dtype)
        print(f"{impl}: AR step {ar['ms']:.2f} ms", flush=True)
        windows = []
        for w in args.windows:
            t = ar if w == 1 else time_step(step, model, first, w, args.repeat, device, dtype)
            t = dict(t, window=w, ratio_to_ar=t["ms"] / ar["ms"])
            windows.append(t)
            print(f"{impl}: window {w}: {t['ms']:.2f} ms ({t['ratio_to_ar']:.2f}x AR)", flush=True)
    ar = dict(ar, ratio_to_ar=1.0)
    return {"impl": impl, "ar_step": ar, "windows": windows}


def compare(vk, runs, key="ms"):
    """vkspec / PyTorch per forward of `key` (ms, or busy_ms: CPU time) (below 1: vkspec is faster)."""
    vk_ms = {1: vk["ar_step"].get(key)}
    vk_ms.update({w["window"]: w.get(key) for w in vk["windows"]})
    rows = []
    print(f"\nvkspec ({vk.get('device', '?')}, {vk.get('clock', '?')}) against PyTorch, {key} per step; "
          "ratio = vkspec / PyTorch (below 1: vkspec is faster)")
    print(f"{'forward':<10} {'vkspec':>10}" + "".join(f" {r['impl']:>12} {'ratio':>7}" for r in runs))
    points = [("AR step", 1, {r["impl"]: r["ar_step"][key] for r in runs})]
    for w in runs[0]["windows"]:
        if w["window"] == 1:  # the AR step again
            continue
        points.append((f"window {w['window']}", w["window"],
                       {r["impl"]: next(x[key] for x in r["windows"] if x["window"] == w["window"]) for r in runs}))
    for label, w, torch_ms in points:
        if vk_ms.get(w) is None:
            continue
        row = {"forward": label, "queries": w, "vkspec_" + key: vk_ms[w]}
        line = f"{label:<10} {vk_ms[w]:>10.2f}"
        for impl, ms in torch_ms.items():
            row[f"{impl}_{key}"] = ms
            row["ratio_" + impl] = vk_ms[w] / ms
            line += f" {ms:>12.2f} {vk_ms[w] / ms:>7.2f}"
        rows.append(row)
        print(line)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--grid", type=int, choices=[16, 24], default=16)
    ap.add_argument("--windows", default="1,4,16,32,64")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    ap.add_argument("--json")
    ap.add_argument("--compare", help="a `vkspec bench --synthetic --json` file of the same shape and grid")
    args = ap.parse_args()
    tokens = args.grid * args.grid
    try:
        args.windows = sorted({int(w) for w in args.windows.split(",") if w})
    except ValueError:
        ap.error(f"--windows expects a comma-separated list of integers, got {args.windows!r}")
    if not args.windows or min(args.windows) < 1 or max(args.windows) > tokens - tokens // 2:
        ap.error(f"--windows must lie in [1, {tokens - tokens // 2}] (the window starts mid-image)")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    vk = None
    if args.compare:
        with open(args.compare) as f:
            vk = json.load(f)
        if (vk.get("shape"), vk.get("grid")) != (args.shape, args.grid):
            ap.error(f"{args.compare} is shape {vk.get('shape')} grid {vk.get('grid')}, "
                     f"not {args.shape} grid {args.grid}")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_bench: error: --device cuda but PyTorch sees no CUDA device")
    dtype = torch.float16 if device.type == "cuda" else torch.float32  # CPU f16 matmul is a slow path
    try:
        model = make_model(args.shape, args.grid, device, dtype, args.seed)
    except RuntimeError as e:  # CUDA out of memory is a RuntimeError in every version we support
        sys.exit(f"torch_bench: error: LlamaGen-{args.shape} does not fit on {device}: {e}")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    out = {"bench": "synthetic", "shape": args.shape, "grid": args.grid, "device": name,
           "torch": torch.__version__, "dtype": str(dtype).replace("torch.", ""), "batch_rows": 2,
           "kv_tokens": tokens // 2, "repeat": args.repeat, "clock": "wall (synchronized)",
           "kv_cache": "vkspec_models.GPT caches (torch.cat append)",
           "sampler": {"cfg": CFG_SCALE, "temperature": TEMPERATURE, "top_k": TOP_K, "top_p": TOP_P},
           "model": {"dim": model.cfg.dim, "n_layer": model.cfg.n_layer, "n_head": model.cfg.n_head,
                     "ffn_hidden": model.cfg.ffn_hidden, "vocab_size": model.cfg.vocab_size,
                     "num_classes": model.cfg.num_classes},
           "weight_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
           "runs": []}
    print(f"PyTorch {torch.__version__} on {name}, {out['dtype']}, LlamaGen-{args.shape} {args.grid}x{args.grid}",
          flush=True)
    step = make_step(model)
    try:
        out["runs"].append(run("eager", step, model, args, device, dtype))
    except RuntimeError as e:
        sys.exit(f"torch_bench: error: eager run failed on {device}: {e}")
    if args.no_compile:
        out["compile"] = "not requested"
    elif not hasattr(torch, "compile"):
        out["compile"] = f"unavailable: PyTorch {torch.__version__} has no torch.compile"
        print("compile: " + out["compile"])
    else:
        try:
            compiled = torch.compile(step, mode="reduce-overhead" if device.type == "cuda" else "default")
            out["runs"].append(run("compile", compiled, model, args, device, dtype))
            out["compile"] = "ok"
        except Exception as e:  # noqa: BLE001 - any compiler failure is a result to report
            out["compile"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            print("compile: " + out["compile"])
    if vk is not None:
        out["compare"] = {"vkspec_json": args.compare, "vkspec_device": vk.get("device"),
                          "rows": compare(vk, out["runs"])}
        if device.type == "cpu":  # both ran on this CPU: CPU time is the steadier measure on a shared machine
            out["compare"]["busy_rows"] = compare(vk, out["runs"], "busy_ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
