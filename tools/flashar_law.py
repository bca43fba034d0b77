#!/usr/bin/env python3
"""A FlashAR post-trained on a tiny model whose law is enumerated (the exact-law sets of
tests/test_exact_law.cpp), so that the total variation of diagonal decoding from the target's
exact law can be measured (the DISABLED_LossyTotalVariation tier, tools/exact_law_power.sh tv).

  flashar_law.py TARGET.safetensors OUT.safetensors [--steps 3000] [--batch 256] [--lr 3e-3]
      [--samples 50000] [--seed 0]

The recipe is train_flashar.py's on a smaller scale (its loss, paper Eq. 5: fused CE + 0.05 H CE
+ 0.05 V CE + 0.2 T^2 KL(raster teacher || V) at T = 2; the backbone frozen for
the first quarter, then trained at 0.2 x the lr), with the target itself as teacher and as data:
grids sampled from it without guidance at temperature 1 under every class and the null class
uniformly, so that the fused factorisation learns the target's conditionals, which the engine then
guides as it guides the target. No class dropout: a random target's null row is a distribution of
its own, not the mixture of its classes that dropout would teach. Adam, cosine from --lr, one
thread: about a minute.
Prints the diagonal factorisation's cross-entropy beside the target's raster one on held-out grids:
the part of the distance FlashAR's factorisation leaves (cells of one diagonal are drawn
independently given the earlier ones).
"""
import argparse
import math
import sys

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)", file=sys.stderr)
    sys.exit(77)

from flashar_model import FlashAR, save_flashar
from safetensors_io import load_file
from train_flashar import diag_ce, losses, raster_ce
from vkspec_models import GPT, gpt_config_from_metadata


def load_target(path):
    t, meta = load_file(path)
    gpt = GPT(gpt_config_from_metadata(meta)).eval()
    gpt.load_state_dict({k: v.float() for k, v in t.items()})
    for p in gpt.parameters():
        p.requires_grad_(False)
    return gpt


@torch.no_grad()
def sample_grids(gpt, n, generator, bs=2000):
    labels = torch.randint(0, gpt.cfg.num_classes + 1, (n,), generator=generator)  # the null class too
    grids = [gpt.generate(labels[i:i + bs], cfg_scale=1.0, generator=generator) for i in range(0, n, bs)]
    return torch.cat(grids), labels


def train(target, tok, lab, a):
    model = FlashAR.from_gpt(target, vertical_layers=1)
    for p in model.parameters():
        p.requires_grad_(True)
    loss_args = argparse.Namespace(aux_h=0.05, aux_v=0.05, kd_weight=0.2, kd_temp=2.0)
    backbone = list(model.base.parameters())
    branch = [p for n, p in model.named_parameters() if not n.startswith("base.")]
    opt = torch.optim.Adam([{"params": branch, "lr": a.lr}, {"params": backbone, "lr": 0.0}])
    g = torch.Generator().manual_seed(a.seed + 1)
    for step in range(a.steps):
        frac = step / a.steps
        lr = a.lr * 0.5 * (1 + math.cos(math.pi * frac))
        stage2 = frac >= 0.25
        opt.param_groups[0]["lr"] = lr
        opt.param_groups[1]["lr"] = 0.2 * lr if stage2 else 0.0
        idx = torch.randint(0, len(tok), (a.batch,), generator=g)
        model.train()
        total, parts = losses(model, target, tok[idx], lab[idx], loss_args, backbone_grad=stage2)
        opt.zero_grad()
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % max(1, a.steps // 10) == 0:
            print(f"step {step}: loss {parts['loss']:.4f} fused {parts['fuse']:.4f} gate {parts['gate']:.3f}",
                  flush=True)
    return model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--samples", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    target = load_target(a.target)
    g = torch.Generator().manual_seed(a.seed)
    tok, lab = sample_grids(target, a.samples, g)
    held_tok, held_lab = sample_grids(target, 5000, g)
    model = train(target, tok, lab, a)
    d = diag_ce(model, held_tok, held_lab, bs=1000)
    r = raster_ce(target, held_tok, held_lab, bs=1000)
    print(f"held-out nats per token: target raster {r:.4f}, FlashAR diagonal {d['fuse']:.4f} "
          f"(H {d['h']:.4f}, V {d['v']:.4f}, mean gate {d['gate']:.3f})", flush=True)
    save_flashar(model, a.out, {"base": "exact-law target", "flashar.law_steps": a.steps,
                                "flashar.raster_ce": f"{r:.4f}", "flashar.diagonal_ce": f"{d['fuse']:.4f}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
