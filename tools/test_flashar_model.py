"""tools/flashar_model.py (FlashAR, issue #48) on small random models: the diagonal attention mask
(no cell sees a later diagonal) and a leak test (a target's fused logits do not move when tokens on
its own or later diagonals change), the corner / row-0 / column-0 / interior head rules, the
untrained gate (0.5) and the initial copies from the teacher, the export names / dtypes /
metadata and the load round trip (the backbone also loads as a plain GPT), and the diagonal
decoder: 2W-1 forwards (31 at 16x16), one sampling call per diagonal, determinism under a
generator, and its KV-cache logits equal to the teacher-forced forward on its own tokens.

usage: test_flashar_model.py
"""
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import flashar_model as fm  # noqa: E402
from safetensors_io import load_file  # noqa: E402
from vkspec_models import GPT, GPTConfig  # noqa: E402


def tiny(grid=4, vocab=16, dim=32, n_layer=2, seed=0, vertical_layers=1, perturb=True):
    torch.manual_seed(seed)
    cfg = GPTConfig(dim=dim, n_layer=n_layer, n_head=2, vocab_size=vocab, num_classes=3,
                    grid_size=grid, multiple_of=16)
    gpt = GPT(cfg)
    with torch.no_grad():
        gpt.output.weight.normal_(0, 0.3)  # GPT starts with zero output; make logits non-trivial
    m = fm.FlashAR.from_gpt(gpt, vertical_layers)
    if perturb:  # a "trained" model: every parameter moved, gate no longer 0.5
        with torch.no_grad():
            for p in m.parameters():
                p.add_(torch.randn_like(p) * 0.05)
            m.gate.fc2.weight.normal_(0, 1.0)
    return gpt, m.eval()


class MaskTest(unittest.TestCase):
    def test_mask_by_diagonal(self):
        W = 5
        m = fm.diagonal_mask(W)
        d = fm.diagonal_index(W)
        self.assertTrue(m[0, 0] and not m[0, 1:].any(), "prefix sees only itself")
        for i in range(W * W):
            self.assertTrue(m[1 + i, 0], "every cell sees the class token")
            for j in range(W * W):
                self.assertEqual(bool(m[1 + i, 1 + j]), bool(d[j] <= d[i]), (i, j))

    def test_no_leak(self):
        _, m = tiny(grid=4)
        W, N = 4, 16
        g = torch.Generator().manual_seed(1)
        tok = torch.randint(0, 16, (2, N), generator=g)
        lab = torch.tensor([0, 3])
        with torch.no_grad():
            ref = m.fused_logits(tok, lab)
        d = fm.diagonal_index(W)
        for dd in range(2 * W - 1):
            t2 = tok.clone()
            later = d >= dd
            t2[:, later] = torch.randint(0, 16, (2, int(later.sum())), generator=g)
            with torch.no_grad():
                got = m.fused_logits(t2, lab)
            keep = d <= dd  # targets on diagonals <= dd use sources on diagonals < dd only
            self.assertTrue(torch.equal(got[:, keep], ref[:, keep]), f"leak at diagonal {dd}")
            if dd + 1 < 2 * W - 1:
                self.assertFalse(torch.allclose(got[:, d == dd + 1], ref[:, d == dd + 1]),
                                 "the next diagonal should see the change (test has power)")


class HeadRuleTest(unittest.TestCase):
    def test_sources(self):
        W = 4
        h_src, v_src, kind = fm.fuse_sources(W)
        for n in range(W * W):
            r, c = divmod(n, W)
            if (r, c) == (0, 0):
                self.assertEqual((h_src[n].item(), v_src[n].item(), kind[n].item()), (0, 0, 0))
            if c > 0:
                self.assertEqual(h_src[n].item(), 1 + r * W + (c - 1))  # left neighbour's position
            if r > 0:
                self.assertEqual(v_src[n].item(), 1 + (r - 1) * W + c)  # upper neighbour's position
            self.assertEqual(kind[n].item(), 0 if n == 0 else 1 if r == 0 else 2 if c == 0 else 3)

    def test_rules_pick_heads(self):
        _, m = tiny(grid=4, perturb=False)
        W, V = 4, 16
        h = torch.randn(1, 1 + W * W, V)
        v = torch.randn(1, 1 + W * W, V)
        fused, hs, vs, g, kind = m.fuse(h, v)
        self.assertTrue(torch.equal(g[0, kind == 0], torch.full((1,), 0.5)))
        self.assertTrue(torch.allclose(fused[0, 0], 0.5 * h[0, 0] + 0.5 * v[0, 0]), "corner: prefix, gated")
        for n in range(1, W * W):
            r, c = divmod(n, W)
            if r == 0:
                self.assertTrue(torch.equal(fused[0, n], h[0, 1 + n - 1]), f"row 0 ({r},{c}): H(r,c-1)")
                self.assertEqual(g[0, n].item(), 1.0)
            elif c == 0:
                self.assertTrue(torch.equal(fused[0, n], v[0, 1 + n - W]), f"column 0 ({r},{c}): V(r-1,c)")
                self.assertEqual(g[0, n].item(), 0.0)
            else:
                want = 0.5 * h[0, 1 + n - 1] + 0.5 * v[0, 1 + n - W]
                self.assertTrue(torch.allclose(fused[0, n], want), f"interior ({r},{c})")
        # a trained gate mixes logits with its own weight
        _, m2 = tiny(grid=4)
        fused, _, _, g, kind = m2.fuse(h, v)
        n = 1 + W + 1  # (1, 2)
        gg = g[0, n].item()
        self.assertNotAlmostEqual(gg, 0.5, places=3)
        self.assertTrue(torch.allclose(fused[0, n], gg * h[0, n] + (1 - gg) * v[0, 1 + n - W], atol=1e-6))

    def test_untrained(self):
        gpt, m = tiny(grid=4, perturb=False)
        self.assertEqual(m.vertical_start, gpt.cfg.n_layer - 1)
        self.assertEqual(m.gate_hidden, 32)
        g = m.gate(torch.randn(7, 16), torch.randn(7, 16))
        self.assertTrue(torch.equal(g, torch.full((7,), 0.5)), "untrained gate is exactly 0.5")
        self.assertTrue(torch.equal(m.vertical.output.weight, gpt.output.weight))
        self.assertTrue(torch.equal(m.vertical.norm.weight, gpt.norm.weight))
        a, b = m.vertical.layers[0].state_dict(), gpt.layers[-1].state_dict()
        self.assertTrue(all(torch.equal(a[k], b[k]) for k in b), "vertical block = teacher layer s")
        # untrained: the corner's V head = H head (same weights, same input at the last layer)
        tok = torch.randint(0, 16, (1, 16))
        with torch.no_grad():
            h, v = m(tok, torch.tensor([1]))
        self.assertTrue(torch.allclose(h[:, 0], v[:, 0], atol=1e-5))

    def test_gate_input(self):
        x = torch.tensor([[1.0, 2.0, 3.0, 1000.0, float("nan")]])
        z = fm.HVGate.normalise(x)
        self.assertLessEqual(z.abs().max().item(), fm.GATE_CLAMP)
        self.assertFalse(torch.isnan(z).any())

    def test_joint_normalisation_is_the_released_one(self):
        # Released `_hv_gate`: [H; V] centred and scaled as one vector, RMS floored at 1e-3.
        h, v = torch.randn(3, 16) * 4 + 2, torch.randn(3, 16)
        x = torch.cat([h, v], -1)
        c = x - x.mean(-1, keepdim=True)
        want = (c / c.pow(2).mean(-1, keepdim=True).clamp_min(1e-6).sqrt()).clamp(-6, 6)
        self.assertTrue(torch.allclose(fm.HVGate.normalise_joint(h, v), want))
        per_head = torch.cat([fm.HVGate.normalise(h), fm.HVGate.normalise(v)], -1)
        self.assertGreater((per_head - want).abs().max().item(), 0.1, "the two normalisations coincide here")
        gate = fm.HVGate(16, norm="joint")
        with torch.no_grad():
            gate.fc2.weight.normal_()
        self.assertTrue(torch.allclose(gate(h, v), torch.sigmoid(gate.fc2(torch.nn.functional.silu(gate.fc1(want)))
                                                                 .squeeze(-1))))


class FileTest(unittest.TestCase):
    def test_round_trip(self):
        gpt, m = tiny(grid=4, n_layer=3, vertical_layers=2)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.safetensors")
            fm.save_flashar(m, path, {"tokenizer": "x"})
            sd, meta = load_file(path)
            for k in gpt.state_dict():
                self.assertIn(k, sd, "backbone under GPT's names")
            for k in m.base.layers[0].state_dict():
                self.assertIn("vertical.layers.1." + k, sd)
            for k in ("vertical.norm.weight", "vertical.output.weight", "gate.fc1.weight",
                      "gate.fc2.weight", "gate.fc2.bias"):
                self.assertIn(k, sd)
            self.assertEqual(len(sd), len(gpt.state_dict()) + 2 * len(m.base.layers[0].state_dict()) + 5)
            self.assertEqual(sd["layers.0.attention.wqkv.weight"].dtype, torch.float16)
            self.assertEqual(sd["vertical.output.weight"].dtype, torch.float16)
            self.assertEqual(sd["vertical.norm.weight"].dtype, torch.float32)
            self.assertEqual(sd["gate.fc1.weight"].dtype, torch.float32)
            self.assertEqual((meta["role"], meta["flashar.vertical_start_layer"], meta["flashar.vertical_layers"],
                              meta["flashar.gate_hidden"], meta["flashar.gate_norm"], meta["vkspec.kind"],
                              meta["tokenizer"]),
                             ("flashar", "1", "2", "32", "joint", "gpt", "x"))
            m2, _ = fm.load_flashar(path)
            self.assertEqual(m2.gate.norm, "joint")
            # A file from before flashar.gate_norm normalised head by head.
            from safetensors_io import save_file
            del meta["flashar.gate_norm"]
            save_file(sd, path, meta)
            self.assertEqual(fm.load_flashar(path)[0].gate.norm, "per-head")
            # the backbone alone loads as a plain GPT
            plain = GPT(gpt.cfg)
            plain.load_state_dict({k: v.float() for k, v in sd.items() if not k.startswith(("vertical.", "gate."))})
        tok = torch.randint(0, 16, (2, 16))
        lab = torch.tensor([0, 2])
        with torch.no_grad():
            a, b = m.fused_logits(tok, lab), m2.fused_logits(tok, lab)
        self.assertLess((a - b).abs().max().item(), 0.05, "f16 round trip")
        self.assertTrue(torch.equal(m2.gate.fc1.weight, m.gate.fc1.weight), "gate kept f32")


class DecoderTest(unittest.TestCase):
    def test_steps_16x16(self):
        _, m = tiny(grid=16, vocab=8, dim=16, n_layer=1)
        st = {}
        out = fm.generate_diagonal(m, torch.tensor([0, 1]), 2.0, generator=torch.Generator().manual_seed(0), stats=st)
        self.assertEqual(out.shape, (2, 256))
        self.assertEqual(st["forwards"], 31)
        self.assertEqual(st["sample_calls"], 31)
        self.assertTrue(((out >= 0) & (out < 8)).all())

    def test_matches_teacher_forcing_and_deterministic(self):
        _, m = tiny(grid=5, vocab=16)
        lab = torch.tensor([0, 2, 3])
        for cfg_s in (1.0, 3.0):
            out, fc, mixed = fm.generate_diagonal(m, lab, cfg_s, temperature=1.0,
                                                  generator=torch.Generator().manual_seed(5), return_logits=True)
            out2 = fm.generate_diagonal(m, lab, cfg_s, generator=torch.Generator().manual_seed(5))
            self.assertTrue(torch.equal(out, out2), "deterministic given the generator")
            with torch.no_grad():
                tf = m.fused_logits(out, lab)
                tfu = m.fused_logits(out, torch.full_like(lab, 3))
            self.assertLess((fc - tf).abs().max().item(), 1e-4, "KV-cache step = teacher-forced diagonal mask")
            want = tfu + cfg_s * (tf - tfu) if cfg_s > 1 else tf
            self.assertLess((mixed - want).abs().max().item(), 1e-3, "CFG after the per-row gate fusion")

    def test_draw_order(self):
        """The documented order: one multinomial call per diagonal on image-major rows."""
        _, m = tiny(grid=3, vocab=16)
        lab = torch.tensor([0, 1])
        out, _, mixed = fm.generate_diagonal(m, lab, 2.0, generator=torch.Generator().manual_seed(9),
                                             return_logits=True)
        g = torch.Generator().manual_seed(9)
        W = 3
        for d in range(2 * W - 1):
            cells = [r * W + c for r, c in fm.diagonal_cells(W, d)]
            probs = mixed[:, cells].reshape(-1, 16).softmax(-1)
            tok = torch.multinomial(probs, 1, generator=g).view(2, len(cells))
            self.assertTrue(torch.equal(tok, out[:, cells]), f"diagonal {d}")


if __name__ == "__main__":
    unittest.main(verbosity=1)
