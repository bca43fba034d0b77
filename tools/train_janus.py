"""The shipped prompt-driven model: a tiny Janus-Pro-architecture generator (tools/janus_model.py)
trained on Fashion-MNIST token grids (encode_dataset.py) with short captions
(fmnist_captions.py) through our own byte-level BPE tokenizer (train_bpe.py).

Each training sample is an image's 16x16 token grid and, as its prefix, Janus-Pro's generation
prompt around a random training caption of the image's class,
  BOS "<|User|>: {caption}\\n\\n<|Assistant|>:" <begin_of_image>
tokenized and left-padded to --prefix-len tokens (padding masked out). With probability
--drop (0.1) the caption is dropped the way Janus builds its unconditional CFG row: every
prompt token but the first (BOS) and the last (<begin_of_image>) replaced by the pad token
(attended, not masked), so CFG at sampling time sees what training saw.

  OMP_NUM_THREADS=1 nice -n 10 /usr/bin/python3 tools/train_janus.py --max-wall-min 80
      resumable (train_runs/janus/ckpt.pt); --max-wall-min stops this invocation (saved; a
      rerun continues); when the schedule completes it exports:
  --export-only  the released Janus checkpoint folder train_runs/janus/hf/ (janus_model's
      save_checkpoint_folder), tools/convert_janus.py -> assets/fmnist_janus.safetensors +
      assets/fmnist_janus.tokenizer.json, the cfg sweep, the card assets/fmnist_janus.md and
      assets/fmnist_janus_samples.png
  --baseline-only  the fmnist_gpt16 c2i class accuracy the card compares with (cached in
      train_runs/janus/gpt16_baseline.json)
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import common as C
import fid
import fmnist_captions as caps
import train_bpe
from encode_dataset import load_vq
from safetensors_io import load_file, save_file
from train_gpt import load_tokens
from vkspec_models import Classifier, GPT, gpt_config_from_metadata

NAME = "fmnist_janus"


# ---------------------------------------------------------------------------------------------
# prompts
# ---------------------------------------------------------------------------------------------
class Prompts:
    """Token ids of Janus prompts around captions, left-padded to a fixed length with a mask."""

    def __init__(self, tok, prefix_len):
        self.tok, self.L = tok, prefix_len
        self.pad_id = tok.token_id(train_bpe.PAD)
        self._ids = {}

    def ids(self, caption):
        if caption not in self._ids:
            ids = self.tok.encode(train_bpe.janus_prompt(caption))
            if len(ids) > self.L:
                raise ValueError(f"prompt of {caption!r} is {len(ids)} tokens > {self.L}")
            self._ids[caption] = ids
        return self._ids[caption]

    def uncond_ids(self, caption):
        """Janus's unconditional row (janus_model.uncond_ids): the prompt with every token but
        the first and last replaced by pad (same length)."""
        return janus().uncond_ids(self.ids(caption), self.pad_id).tolist()

    def batch(self, id_lists):
        """[ids] -> (prefix [B, L] long, mask [B, L] bool), left padding (pad_id, False)."""
        B = len(id_lists)
        out = torch.full((B, self.L), self.pad_id, dtype=torch.long)
        mask = torch.zeros(B, self.L, dtype=torch.bool)
        for b, ids in enumerate(id_lists):
            out[b, self.L - len(ids):] = torch.tensor(ids)
            mask[b, self.L - len(ids):] = True
        return out, mask

    def for_captions(self, captions, drop=None):
        """captions [str]; drop: bool per caption (uncond row) or None."""
        return self.batch([self.uncond_ids(c) if drop is not None and drop[i] else self.ids(c)
                           for i, c in enumerate(captions)])


def train_captions(labels, g, drop_p):
    """A random training caption per label (drawn from g) and the CFG drop flags."""
    per = caps.TRAIN_CAPTIONS
    r = torch.rand(len(labels), generator=g)
    drop = torch.rand(len(labels), generator=g) < drop_p
    out = [per[int(k)][int(r[i] * len(per[int(k)]))] for i, k in enumerate(labels)]
    return out, drop.tolist()


def test_captions(labels, offset=0):
    """Held-out captions for held-out images: image i of class k gets TEST_CAPTIONS[k][i % n]
    (i counted from offset)."""
    return [caps.TEST_CAPTIONS[int(k)][(offset + i) % len(caps.TEST_CAPTIONS[int(k)])]
            for i, k in enumerate(labels)]


# ---------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------
def janus():
    import janus_model  # written alongside; imported late so --baseline-only runs without it
    return janus_model


def make_model(args, text_vocab):
    J = janus()
    cfg = J.JanusConfig(dim=args.dim, n_layer=args.n_layer, n_head=args.n_head,
                        ffn_hidden=args.ffn_hidden, text_vocab=text_vocab,
                        image_vocab=args.image_vocab, image_embed_dim=args.image_embed_dim,
                        head_hidden=args.head_hidden, rope_theta=10000.0, norm_eps=1e-6,
                        grid=args.grid)
    return J.JanusGen(cfg)


@torch.no_grad()
def val_loss(model, prompts, tok, lab, n=1000, bs=100):
    """Token cross-entropy (nats) on the first n held-out images with held-out captions."""
    n = min(n, len(tok))
    was = model.training
    model.eval()
    tot = 0.0
    for i in range(0, n, bs):
        pre, mask = prompts.for_captions(test_captions(lab[i:i + bs], offset=i))
        logits = model.forward_train(pre, mask, tok[i:i + bs])
        tot += F.cross_entropy(logits.flatten(0, 1).float(), tok[i:i + bs].flatten(),
                               reduction="sum").item()
    model.train(was)
    return tot / (n * tok.shape[1])


@torch.no_grad()
def generate_tokens(model, prompts, captions, cfg_scale, temperature, top_k, seed):
    """Image tokens [B, N] for captions, one janus_model `generate` each (the unpadded prompt and
    Janus's unconditional row; one generator seeded by seed for the whole list)."""
    g = torch.Generator().manual_seed(seed)
    return torch.stack([model.generate(prompts.ids(c), cfg=cfg_scale, temperature=temperature,
                                       top_k=top_k, pad_id=prompts.pad_id, generator=g)[0]
                        for c in captions])


def decode(vq, tokens, grid):
    with torch.no_grad():
        return torch.cat([vq.decode_code(tokens[i:i + 100].view(-1, grid, grid)).clamp(-1, 1)
                          for i in range(0, len(tokens), 100)])


# ---------------------------------------------------------------------------------------------
# evaluation helpers
# ---------------------------------------------------------------------------------------------
def load_classifier(assets):
    clf = Classifier()
    clf.load_state_dict(load_file(os.path.join(assets, "fmnist_classifier.safetensors"))[0])
    return clf.eval()


def score(clf, x, labels, ref):
    """(class accuracy, correct count, FID vs the test set) of images x [B,1,32,32]."""
    with torch.no_grad():
        pred = torch.cat([clf(x[i:i + 500]).argmax(-1) for i in range(0, len(x), 500)])
    k = int((pred == labels).sum())
    f = fid.frechet(*fid.stats(fid.features(clf, x)), *ref) if ref is not None else float("nan")
    return k / len(labels), k, f


def fid_ref(clf, runs):
    path = os.path.join(runs, "fid_stats_32.npz")
    if not os.path.exists(path):
        fid.write_reference_stats(clf, 32, path)
    return fid.load_stats(path)


def eval_labels(per_class):
    return torch.arange(10).repeat_interleave(per_class)


def gpt16_baseline(args, log):
    """fmnist_gpt16 c2i ar at its default sampler: class accuracy over per_class x 10 images."""
    path = os.path.join(args.run_dir, "gpt16_baseline.json")
    if os.path.exists(path):
        with open(path) as f:
            res = json.load(f)
        if res.get("per_class") == args.eval_per_class:
            return res
    sd, meta = load_file(os.path.join(args.assets_dir, "fmnist_gpt16.safetensors"))
    model = GPT(gpt_config_from_metadata(meta))
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    model.eval()
    vq = load_vq(os.path.join(args.assets_dir, "fmnist_vq.safetensors"))
    clf = load_classifier(args.assets_dir)
    labels = eval_labels(args.eval_per_class)
    cfg_s, temp, top_k = float(meta["cfg"]), float(meta["temperature"]), int(meta["top_k"])
    t0 = time.time()
    g = torch.Generator().manual_seed(args.eval_seed)
    toks = torch.cat([model.generate(labels[i:i + 100], cfg_scale=cfg_s, temperature=temp,
                                     top_k=top_k, generator=g) for i in range(0, len(labels), 100)])
    x = decode(vq, toks, model.cfg.grid_size)
    acc, k, f = score(clf, x, labels, fid_ref(clf, args.runs_dir))
    res = {"per_class": args.eval_per_class, "cfg": cfg_s, "temperature": temp, "top_k": top_k,
           "accuracy": acc, "correct": k, "n": len(labels), "fid": f, "seed": args.eval_seed,
           "seconds": time.time() - t0}
    log(f"gpt16 baseline: cfg {cfg_s} accuracy {acc:.3f} ({k}/{len(labels)}) FID {f:.2f} "
        f"({res['seconds']:.0f} s)")
    C.json_dump(path, res)
    return res


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------
def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--n-layer", type=int, default=6)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--ffn-hidden", type=int, default=768)
    ap.add_argument("--head-hidden", type=int, default=256)
    ap.add_argument("--image-embed-dim", type=int, default=8)
    ap.add_argument("--image-vocab", type=int, default=1024)
    ap.add_argument("--grid", type=int, default=16)
    ap.add_argument("--prefix-len", type=int, default=24, help="prompt tokens, left-padded")
    ap.add_argument("--bpe-vocab", type=int, default=512)
    ap.add_argument("--drop", type=float, default=0.1, help="CFG caption drop probability")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--budget-min", type=float, default=80,
                    help="compute minutes at which the LR schedule completes")
    ap.add_argument("--wall-cap-min", type=float, default=None,
                    help="wall minutes (all runs) at which the schedule completes (default 4x budget)")
    ap.add_argument("--max-wall-min", type=float, default=None,
                    help="stop THIS invocation after so many wall minutes (saved; rerun continues)")
    ap.add_argument("--ckpt-every-s", type=float, default=300)
    ap.add_argument("--eval-per-class", type=int, default=30)
    ap.add_argument("--eval-seed", type=int, default=1)
    ap.add_argument("--cfg-grid", default="2.0,3.0,5.0",
                    help="cfg values tried at export (lowest FID becomes the default)")
    ap.add_argument("--sweep-per-class", type=int, default=10, help="images per class per cfg")
    ap.add_argument("--names-per-class", type=int, default=10,
                    help="images per class prompted with the class name (a training caption)")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-k", type=int, default=0)
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--baseline-only", action="store_true")
    ap.add_argument("--runs-dir", default=C.RUNS)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    ap.add_argument("--measure", type=int, default=0, help="time N steps and exit")
    args = ap.parse_args()
    args.run_dir = args.run_dir or os.path.join(args.runs_dir, "janus")
    os.makedirs(args.run_dir, exist_ok=True)
    return args


def tokenizer(args, log):
    path = os.path.join(args.run_dir, "tokenizer.json")
    if not os.path.exists(path):
        vocab, merges = train_bpe.train(train_bpe.training_lines(), args.bpe_vocab)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(train_bpe.tokenizer_json(vocab, merges), f, ensure_ascii=False, indent=1)
        os.replace(path + ".tmp", path)
        log(f"tokenizer: {len(vocab)} tokens ({len(merges)} merges) -> {path}")
    tok = train_bpe.ByteBPE.from_file(path)
    train_bpe.check(tok, out=lambda s: None)
    return tok, path


def main():
    args = parse()
    C.set_threads()
    torch.manual_seed(0)
    if args.baseline_only:
        gpt16_baseline(args, C.Log(os.path.join(args.run_dir, "train.log")))
        return
    run = C.Run("janus", args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    tok, tok_path = tokenizer(args, run.log)
    prompts = Prompts(tok, args.prefix_len)
    for c, _ in caps.train_pairs() + caps.test_pairs():
        prompts.ids(c)  # every caption fits the prefix
    model = make_model(args, len(tok))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    run.resume(model, opt)
    if not args.export_only:
        run.extra.setdefault("commands", []).append(C.cmdline())
    nparam = sum(p.numel() for p in model.parameters())
    run.log(f"janus: params {nparam / 1e6:.2f}M cfg {model.cfg} text vocab {len(tok)} "
            f"prefix {args.prefix_len} batch {args.batch} steps {args.steps} "
            f"budget {args.budget_min} min wall cap {run.wall_cap_s / 60:.0f} min")
    tok_tr, lab_tr = load_tokens(args.grid, "train", args.runs_dir)
    tok_te, lab_te = load_tokens(args.grid, "test", args.runs_dir)
    if not args.export_only:
        t_inv, t_last, steps_last = time.time(), time.time(), run.step
        model.train()
        while not run.done():
            i, g = C.step_batch(run.step, len(tok_tr), args.batch)
            tok, lab = tok_tr[i], lab_tr[i]
            pre, mask = prompts.for_captions(*train_captions(lab, g, args.drop))
            lr = C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
            logits = model.forward_train(pre, mask, tok)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), tok.flatten())
            C.descend(opt, loss, lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            save = run.tick()
            if args.measure and run.step - steps_last >= args.measure:
                print(f"{(time.time() - t_inv) / args.measure:.3f} s/step")
                return
            if run.step % 25 == 0:
                sps = (time.time() - t_last) / max(1, run.step - steps_last)
                run.log(f"step {run.step} loss {loss.item():.4f} lr {lr:.2e} {sps:.2f} s/step "
                        f"progress {run.progress():.3f} ({run.summary()})")
                t_last, steps_last = time.time(), run.step
            if run.step % 250 == 0:
                run.log(f"step {run.step} val loss {val_loss(model, prompts, tok_te, lab_te, n=300):.4f}"
                        " (300 held-out images, held-out captions)")
            if save:
                run.save(model, opt)
            if args.max_wall_min and time.time() - t_inv >= 60 * args.max_wall_min:
                run.save(model, opt)
                run.log(f"--max-wall-min {args.max_wall_min} reached at step {run.step}: saved, "
                        f"rerun to continue ({run.summary()})")
                return
        run.save(model, opt)
        run.log(f"schedule complete: {run.summary()}")
    export(args, run, model, prompts, tok_path, tok_te, lab_te)


def prompt_eval(args, model, prompts, vq, clf, ref, cfg_s, per_class, seed, log, names=False):
    """Class accuracy (Wilson 95 %) and FID of per_class x 10 images from held-out prompts (names:
    from the class names, training captions) at cfg_s: (cfg, accuracy, correct, n, lo, hi, fid,
    seconds)."""
    pairs = ([(caps.canonical_prompt(k), k) for k in range(10) for _ in range(per_class)]
             if names else caps.eval_prompts(per_class))
    labels = torch.tensor([k for _, k in pairs])
    t0 = time.time()
    toks = generate_tokens(model, prompts, [c for c, _ in pairs], cfg_s, args.temperature,
                           args.top_k, seed=seed)
    acc, k, f = score(clf, decode(vq, toks, args.grid), labels, ref)
    lo, hi = C.wilson(k, len(labels))
    log(f"cfg {cfg_s}{' class names' if names else ''}: class accuracy {acc:.3f} ({k}/{len(labels)}, 95% {lo:.3f}-{hi:.3f}) "
        f"FID {f:.2f} ({time.time() - t0:.0f} s, {len(labels)} images, seed {seed})")
    return (cfg_s, acc, k, len(labels), lo, hi, f, time.time() - t0)


def sweep(args, model, prompts, vq, clf, ref, log):
    """--cfg-grid at --sweep-per-class images per class (seed eval_seed + 1), the lowest FID
    chosen (as fmnist_gpt16 chose its cfg); then the card's measure at that cfg with
    --eval-per-class (seed eval_seed), and with the class names as prompts (--names-per-class).
    Returns (sweep rows, final row, class-name row or None). Rows are cached in
    run_dir/sweep.json (a rerun of --export-only reuses them for the same checkpoint step)."""
    path = os.path.join(args.run_dir, "sweep.json")
    cache = {}
    if os.path.exists(path):
        with open(path) as f:
            cache = json.load(f)
    key = lambda s, n, seed: f"{args.step_for_cache} {s} {n} {seed} {args.temperature} {args.top_k}"

    def cached(s, n, seed, names=False):
        k = key(s, n, seed) + (" names" if names else "")
        if k not in cache:
            cache[k] = prompt_eval(args, model, prompts, vq, clf, ref, s, n, seed, log, names)
            C.json_dump(path, cache)
        return tuple(cache[k])
    rows = [cached(float(v), args.sweep_per_class, args.eval_seed + 1) for v in args.cfg_grid.split(",")]
    best = min(rows, key=lambda r: r[6])
    final = cached(best[0], args.eval_per_class, args.eval_seed)
    names = cached(best[0], args.names_per_class, args.eval_seed, names=True) \
        if args.names_per_class else None
    return rows, final, names


def samples_png(args, model, prompts, vq, cfg_s, path):
    """One column per class: rows 0-3 the class name, rows 4-7 its held-out captions."""
    grid_caps = []
    for r in range(8):
        for k in range(10):
            grid_caps.append(caps.canonical_prompt(k) if r < 4 else caps.TEST_CAPTIONS[k][r - 4])
    toks = generate_tokens(model, prompts, grid_caps, cfg_s, args.temperature, args.top_k, seed=2)
    x = decode(vq, toks, args.grid)
    C.write_png(path, C.grid_image(C.from_unit(x[:, 0]), 10, scale=2))


def rel(path):
    """A path as the card shows it: relative to the repository when inside it."""
    r = os.path.relpath(path, C.ROOT)
    return path if r.startswith("..") else r


def convert(args, hf_dir, out_base, log):
    cmd = ["/usr/bin/python3", "tools/convert_janus.py", rel(hf_dir), rel(out_base),
           "--dtype", "f16", "--prompt-tokens", str(args.prefix_len)]
    log("convert: " + " ".join(cmd))
    subprocess.run([sys.executable] + cmd[1:], check=True, cwd=C.ROOT)
    return " ".join(cmd)


def export(args, run, model, prompts, tok_path, tok_te, lab_te):
    J = janus()
    model.eval()
    vl = val_loss(model, prompts, tok_te, lab_te, n=1000)
    run.log(f"final val loss {vl:.4f} (1000 held-out images, held-out captions)")
    hf_dir = os.path.join(args.run_dir, "hf")
    vq = load_vq(os.path.join(args.assets_dir, "fmnist_vq.safetensors"))
    # the released layout with the VQ decoder as gen_vision_model.*; f32 (what we trained) so the
    # f32 conversion is exact
    J.save_checkpoint_folder(model, hf_dir, tok_path, vq=vq, dtype=torch.float32)
    back, back_vq = J.load_checkpoint_folder(hf_dir, with_vq=True, quiet=True)
    ids = torch.tensor([prompts.ids(caps.canonical_prompt(9))])
    t = tok_te[0, :16]
    d = (back.teacher_forced_logits(ids, t) - model.teacher_forced_logits(ids, t)).abs().max().item()
    dv = (back_vq.decode_code(tok_te[:2].view(-1, args.grid, args.grid)) -
          vq.decode_code(tok_te[:2].view(-1, args.grid, args.grid))).abs().max().item()
    run.log(f"{rel(hf_dir)}: reloaded with janus_model.load_checkpoint_folder, max |logit diff| "
            f"{d:.2e}, max |VQ decode diff| {dv:.2e}")
    if d > 1e-4 or dv > 1e-3:
        raise RuntimeError("the checkpoint folder does not reproduce the model")
    conv_dir = os.path.join(args.run_dir, "converted")
    os.makedirs(conv_dir, exist_ok=True)
    conv_cmd = convert(args, hf_dir, os.path.join(conv_dir, NAME), run.log)

    clf = load_classifier(args.assets_dir)
    ref = fid_ref(clf, args.runs_dir)
    base = gpt16_baseline(args, run.log)
    args.step_for_cache = run.step
    rows, best, names = sweep(args, model, prompts, vq, clf, ref, run.log)
    cfg_s = best[0]
    out = os.path.join(args.assets_dir, NAME)
    samples_png(args, model, prompts, vq, cfg_s, out + "_samples.png")

    sd, meta = load_file(os.path.join(conv_dir, NAME + ".safetensors"))
    # the converter has no options for these: the default sampler chosen above, and the VQ is
    # the shipped fmnist_vq (the converter's own .vq.safetensors copy of it is not shipped)
    meta.update({"cfg": str(cfg_s), "temperature": str(args.temperature),
                 "top_k": str(args.top_k), "vq": "fmnist_vq.safetensors",
                 "val_loss": f"{vl:.4f}"})
    write_card(args, run, model, vl, rows, best, names, base, meta, conv_cmd, out + ".md")
    with open(os.path.join(conv_dir, NAME + ".tokenizer.json"), "rb") as f:
        tj = f.read()
    with open(out + ".tokenizer.json.tmp", "wb") as f:
        f.write(tj)
    os.replace(out + ".tokenizer.json.tmp", out + ".tokenizer.json")
    save_file(sd, out + ".safetensors", meta)  # last: its existence marks the stage done
    run.log(f"exported {out}.safetensors (cfg {cfg_s})")


def write_card(args, run, model, vl, rows, best, names, base, meta, conv_cmd, path):
    cfg = model.cfg
    nparam = sum(p.numel() for p in model.parameters())
    table = ("| cfg | class accuracy (95 % Wilson) | FID (classifier features) | seconds |\n"
             "|---|---|---|---|\n")
    table += "\n".join(f"| {s} | {a:.3f} ({k}/{n}; {lo:.3f}-{hi:.3f}) | {f:.2f} | {t:.0f} |"
                       for s, a, k, n, lo, hi, f, t in rows)
    blo, bhi = C.wilson(base["correct"], base["n"])
    s, a, k, n, lo, hi, f, t = best
    tok = train_bpe.ByteBPE.from_file(os.path.join(args.run_dir, "tokenizer.json"))
    ex = "\n".join(f"- `{train_bpe.janus_prompt(c)!r}` -> `{tok.encode(train_bpe.janus_prompt(c))}` "
                   f"= `{tok.tokens(tok.encode(train_bpe.janus_prompt(c)))}`"
                   for c in ("ankle boot", "a pair of sneakers"))
    ex += "\n" + "\n".join(f"- `{c!r}` (no template) -> `{tok.tokens(tok.encode(c, False))}`"
                            for c in ("A Short Leather Boot", "zebra-striped pyjamas"))
    cmds = "\n".join(f"- `{c}`" for c in run.extra.get("commands", [])) or f"- `{C.cmdline()}`"
    meta_card = {k: v.replace("\n", "\\n") for k, v in meta.items()}
    C.write_card(path, f"{NAME}: prompt-driven Janus-Pro-architecture generator", [
        ("What", f"A tiny Janus-Pro (tools/janus_model.py `JanusGen`): LLaMA decoder of "
                 f"{cfg.n_layer} layers, dim {cfg.dim}, {cfg.n_head} heads, FFN {cfg.ffn_hidden}, "
                 f"text vocab {cfg.text_vocab} (our byte-level BPE, tools/train_bpe.py), image "
                 f"vocab {cfg.image_vocab} (`fmnist_vq` codes) embedded at width "
                 f"{cfg.image_embed_dim} then `gen_aligner`, `gen_head` of hidden width "
                 f"{cfg.head_hidden}; {cfg.grid}x{cfg.grid} tokens -> 32x32 pixels. "
                 f"{nparam / 1e6:.2f}M parameters. Conditioned on Janus-Pro's generation prompt "
                 "`<｜begin▁of▁sentence｜><|User|>: {caption}\\n\\n<|Assistant|>:<begin_of_image>` "
                 f"left-padded to {args.prefix_len} tokens; the unconditional CFG row is Janus's "
                 "(every prompt token but the first and the last replaced by `<｜▁pad▁｜>`)."),
        ("Data", f"Fashion-MNIST train split, token grids from encode_dataset.py; captions from "
                 f"tools/fmnist_captions.py ({len(caps.train_pairs())} training captions, a random "
                 f"one of the image's class per sample; {len(caps.test_pairs())} held-out "
                 f"paraphrases, 4 per class, never trained on); caption dropped with probability "
                 f"{args.drop} for CFG.\n\nTokenizer examples (BOS added by the template):\n{ex}"),
        ("Training", f"Invocations (a rerun resumes from train_runs/janus/ckpt.pt):\n{cmds}\n\n"
                     f"Text vocab {cfg.text_vocab}: `/usr/bin/python3 tools/train_bpe.py --vocab "
                     f"{args.bpe_vocab}` (train_janus.py makes train_runs/janus/tokenizer.json the "
                     f"same way when it is missing).\n\nBatch {args.batch}, peak lr {args.lr}, AdamW "
                     f"(0.9, 0.95), weight decay {args.weight_decay}, warmup 3 % then cosine; "
                     f"{run.summary()} on 2 shared CPU cores (one thread).\n\nExport: "
                     f"`janus_model.save_checkpoint_folder` -> `train_runs/janus/hf/` (Janus's "
                     f"released folder layout, f32, with the VQ as `gen_vision_model.*`), then "
                     f"`{conv_cmd}`; cfg, temperature, top_k, `vq` (= the shipped "
                     "`fmnist_vq.safetensors`) and val_loss written into the converted file's "
                     "metadata afterwards (the converter has no options for them)."),
        ("Results", f"- test token cross-entropy (1000 held-out images, held-out captions): "
                    f"{vl:.4f} nats (fmnist_gpt16, class-conditional: 1.8812 on 1000 test images)\n"
                    f"- default sampler: cfg {s}, temperature {args.temperature}, top_k "
                    f"{args.top_k} (lowest FID in the sweep below)\n"
                    f"- class accuracy from **held-out** prompts, {n} images "
                    f"({args.eval_per_class} per class), shipped classifier: **{a:.3f}** ({k}/{n}; "
                    f"95 % Wilson {lo:.3f}-{hi:.3f}), FID {f:.2f}\n"
                    + (f"- class accuracy prompted with the class names (training captions), "
                       f"{names[3]} images: {names[1]:.3f} ({names[2]}/{names[3]}; 95 % Wilson "
                       f"{names[4]:.3f}-{names[5]:.3f})\n" if names else "")
                    + f"- fmnist_gpt16 c2i ar at its default sampler (cfg {base['cfg']}), "
                    f"{base['n']} images ({base['per_class']} per class), same classifier: "
                    f"{base['accuracy']:.3f} ({base['correct']}/{base['n']}; 95 % Wilson "
                    f"{blo:.3f}-{bhi:.3f}), FID {base['fid']:.2f}\n\n"
                    f"cfg sweep ({rows[0][3]} images per row, held-out prompts, seed "
                    f"{args.eval_seed + 1}):\n\n{table}\n\n"
                    f"Held-out prompts: the 4 held-out captions of each class in turn (`fmnist_captions."
                    f"eval_prompts`), one `JanusGen.generate` per image (the unpadded prompt and "
                    f"Janus's unconditional row), seed {args.eval_seed} for the {n}-image measure. "
                    "FID against the 10k test set in fmnist_classifier feature space; only "
                    "comparable within this project and at equal image counts."),
        ("Samples", f"`{NAME}_samples.png`: one column per class (0..9 left to right), default "
                    "sampler, seed 2; rows 1-4 the prompt is the class name ("
                    + ", ".join(f"\"{caps.canonical_prompt(k)}\"" for k in range(10))
                    + "), rows 5-8 the class's four held-out captions."),
        ("Dtypes", "matrices and embeddings F16, norms and biases F32 (`--dtype f16`: half the file; "
                   "the engine runs its matrices in f16 by default either way)."),
        ("Metadata", C.fmt_meta(meta_card)),
    ])


if __name__ == "__main__":
    main()
