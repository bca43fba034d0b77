"""Stage 5: train spatial draft heads (h1..h4 to the right, v1/v2 below) on a frozen target.

The contract (where a head reads, what it predicts) is in vkspec_models.DraftHeads. Loss: mean
over heads of cross-entropy against the true token at the head's target offset, counting only
targets inside the same row (horizontal) / inside the grid (vertical). The base sees its
unconditional condition 10% of the time (LlamaGen's null class, Janus-Pro's padded prompt), so
the heads also work on the unconditional half of a CFG batch.

  OMP_NUM_THREADS=2 /usr/bin/python3 tools/train_draft_heads.py                 (fmnist_gpt16)
  OMP_NUM_THREADS=2 /usr/bin/python3 tools/train_draft_heads.py --base fmnist_janus \
      --name fmnist_janus_heads     (a Janus-Pro file: captions of the image's class as prompts)
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F

import common as C
from frozen_base import load_base
from safetensors_io import save_file
from train_gpt import load_tokens
from vkspec_models import DRAFT_HEAD_NAMES, DraftHeads, draft_head_offsets


def target_masks(grid):
    """{head: (offset, bool mask [N])}: position n has a valid target for that head."""
    N = grid * grid
    n = torch.arange(N)
    out = {}
    for name, off in draft_head_offsets(grid).items():
        ok = n + off < N
        if name.startswith("h"):
            ok &= (n % grid) + off < grid
        out[name] = (off, ok)
    return out


def head_losses(base, heads, tok, lab, masks, drop_p=0.0, split="train", offset=0):
    base_logits, h = base.states(tok, lab, drop_p, split, offset)
    out = heads(h, base.output)
    losses, stats = {}, {}
    for name, logits in out.items():
        off, ok = masks[name]
        src = ok.nonzero().flatten()
        lg, tgt = logits[:, src], tok[:, src + off]
        losses[name] = F.cross_entropy(lg.flatten(0, 1), tgt.flatten())
        with torch.no_grad():
            stats[name + "_acc"] = (lg.argmax(-1) == tgt).float().mean().item()
            # one-token speculative acceptance vs the base's own distribution at the target
            # position (teacher-forced prefix): E[sum_x min(p_head, p_base)]
            pb = base_logits[:, src + off].softmax(-1)
            stats[name + "_accept"] = torch.minimum(lg.softmax(-1), pb).sum(-1).mean().item()
    return losses, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="fmnist_gpt16_heads")
    ap.add_argument("--base", default="fmnist_gpt16")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--budget-min", type=float, default=22)
    ap.add_argument("--wall-cap-min", type=float, default=None)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ckpt-every-s", type=float, default=300)
    ap.add_argument("--runs-dir", default=C.RUNS)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--assets-dir", default=C.ASSETS)
    args = ap.parse_args()
    C.set_threads()
    torch.manual_seed(0)

    base = load_base(args.assets_dir, args.base)
    grid = base.grid
    heads = DraftHeads(base.dim)
    opt = torch.optim.AdamW(heads.parameters(), lr=args.lr, weight_decay=0.0)
    run = C.Run(args.name, args.steps, args.budget_min, args.ckpt_every_s, args.run_dir,
                args.wall_cap_min)
    run.resume(heads, opt)
    masks = target_masks(grid)
    tok_tr, lab_tr = load_tokens(grid, "train", args.runs_dir)
    tok_te, lab_te = load_tokens(grid, "test", args.runs_dir)
    t_last, steps_last = time.time(), run.step
    while not run.done():
        i, _ = C.step_batch(run.step, len(tok_tr), args.batch)
        C.set_lr(opt, C.lr_at(run.progress(), args.lr, 0.03))
        losses, stats = head_losses(base, heads, tok_tr[i], lab_tr[i], masks, drop_p=0.1)
        loss = sum(losses.values()) / len(losses)
        C.descend(opt, loss)
        save = run.tick()
        if run.step % 25 == 0:
            sps = (time.time() - t_last) / max(1, run.step - steps_last)
            run.log(f"step {run.step} loss {loss.item():.4f} " +
                    " ".join(f"{k} {v.item():.3f}" for k, v in losses.items()) +
                    f" {sps:.2f} s/step progress {run.progress():.3f}")
            t_last, steps_last = time.time(), run.step
        if save:
            run.save(heads, opt)
    run.save(heads, opt)
    export(args, run, base, heads, tok_te, lab_te, masks)


@torch.no_grad()
def evaluate(base, heads, tok, lab, masks, n=1000, bs=100):
    agg = {}
    for i in range(0, min(n, len(tok)), bs):
        losses, stats = head_losses(base, heads, tok[i:i + bs], lab[i:i + bs], masks, split="test", offset=i)
        for k, v in list(losses.items()) + list(stats.items()):
            agg.setdefault(k, []).append(float(v))
    return {k: sum(v) / len(v) for k, v in agg.items()}


def export(args, run, base, heads, tok_te, lab_te, masks):
    ev = evaluate(base, heads, tok_te, lab_te, masks)
    run.log(f"eval {ev}")
    grid = base.grid
    offs = draft_head_offsets(grid)
    state = C.fp16_export(heads.state_dict())
    meta = {"vkspec.kind": "draft_heads", "base": args.base, "dim": str(base.dim),
            "vocab_size": str(base.vocab), "grid_size": str(grid),
            "heads": ",".join(DRAFT_HEAD_NAMES),
            "offsets": ",".join(str(offs[n]) for n in DRAFT_HEAD_NAMES),
            "placement": "post_norm", "block": "residual_silu_linear",
            "output": "shared_base_output", "base_family": base.family}
    if base.family == "janus-pro":
        head, uncond, test_cond = "`gen_head`, an MLP", "Janus's unconditional prompt", ", held-out captions"
        given = (f"--prompt \"an ankle boot\" --model assets/{args.base}.safetensors "
                 f"--heads assets/{args.name}.safetensors ")
        what = "ten images of one prompt"
    else:
        head, uncond, test_cond = "the `output` matrix", "null class", ""
        given, what = "", "one image per class, 0..9"
    os.makedirs(args.assets_dir, exist_ok=True)
    base_path = os.path.join(args.assets_dir, args.name)
    rows = "| head | target offset | valid targets | CE (nats) | top-1 acc | accept vs base |\n"
    rows += "|---|---|---|---|---|---|\n" + "\n".join(
        f"| {n} | +{offs[n]} | {int(masks[n][1].sum())}/{grid * grid} | {ev[n]:.3f} | "
        f"{ev[n + '_acc']:.3f} | {ev[n + '_accept']:.3f} |" for n in DRAFT_HEAD_NAMES)
    C.write_card(base_path + ".md", f"{args.name}: spatial draft heads for {args.base}", [
        ("What", "Six Medusa-style heads (tools/vkspec_models.py `DraftHeads`): "
                 "`logits = output(h + SiLU(W h + b))`, h = the base GPT's final hidden state "
                 "AFTER its final `norm`, `output` = the base model's own frozen image head "
                 f"({head}, not stored here). At the position whose base logits predict image token n, "
                 f"head hj predicts token n+j (j=1..4), v1 token n+{grid}, v2 token n+{2 * grid}. "
                 "Targets wrapping past the row end (h) or the grid bottom (v) were never "
                 "trained: do not propose them."),
        ("Training", f"`{C.cmdline()}`\n\nBatch {args.batch}, {run.summary()} on 2 shared CPU "
                     f"cores; base frozen, {uncond} 10% of the time."),
        (f"Results (1000 test images{test_cond}, teacher-forced, no CFG, temperature 1)",
         rows + "\n\n`accept vs base` = E[sum_x min(p_head(x), p_base(x))] with p_base the base "
                "model's distribution at the target position given the true prefix: the "
                "probability a single speculative proposal from the head would be accepted."),
        ("Samples", f"`{args.name}_samples.png`: the heads at work, drawn by the engine after export with "
                    f"`build/cli/vkspec generate {given}--method hawk --images 10 --columns 10 --scale 2 --seed 2 "
                    f"--out assets/{args.name}_samples.png` ({what}; hawk is lossless, "
                    "so these are the base model's samples, produced with the heads' drafts)."),
        ("Dtypes", "`draft_heads.*.linear.weight` F16 [dim, dim]; `.bias` F32 [dim]."),
        ("Metadata", C.fmt_meta(meta)),
    ])
    save_file(state, base_path + ".safetensors", meta)  # last: marks the stage done
    run.log(f"exported {base_path}.safetensors")


if __name__ == "__main__":
    main()
