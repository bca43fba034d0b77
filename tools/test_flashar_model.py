"""tools/flashar_model.py (FlashAR, issue #48) on small random models: the diagonal attention mask
(no cell sees a later diagonal) and a leak test (a target's fused logits do not move when tokens on
its own or later diagonals change), the corner / row-0 / column-0 / interior head rules, the
untrained gate (0.5) and the initial copies from the teacher, the export names / dtypes /
metadata and the load round trip (the backbone also loads as a plain GPT), and the diagonal
decoder: 2W-1 forwards (31 at 16x16), one sampling call per diagonal, determinism under a
generator, and its KV-cache logits equal to the teacher-forced forward on its own tokens. On a
Janus-Pro backbone (flashar_janus.py): the corner from <begin_of_image>, Janus's unconditional
prompt as the CFG row, decoding against teacher forcing, the engine file's names. On a
Lumina-mGPT backbone (flashar_lumina.py): the line breaks' place (mask and V sources), the
corner, no leak, the unconditional row's mask, the file round trip.

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


def tiny_janus(grid=4, vocab=16, prompt_tokens=6, seed=0):
    """A random JanusGen with a random FlashAR on it (every parameter moved, the gate away from
    0.5), pad id 1 of a 40-token text vocabulary."""
    import janus_model as jm
    from flashar_janus import JanusFlashAR
    torch.manual_seed(seed)
    cfg = jm.JanusConfig(dim=32, n_layer=2, n_head=2, ffn_hidden=64, text_vocab=40, image_vocab=vocab,
                         head_hidden=24, grid=grid)
    base = jm.JanusGen(cfg).eval()
    m = JanusFlashAR.from_gpt(base, 1, prompt_tokens=prompt_tokens, pad_id=1)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(torch.randn_like(p) * 0.05)
        m.gate.fc2.weight.normal_(0, 1.0)
    return base, m.eval()


def janus_prompts():
    """Two left-padded prompts (ids 2.. are text; BOS 3 first, <begin_of_image> 4 last) and masks."""
    ids = torch.tensor([[1, 1, 3, 9, 8, 4], [3, 7, 6, 5, 9, 4]])
    return ids, (ids != 1).long()


class JanusTest(unittest.TestCase):
    """flashar_janus: the Janus-Pro backbone's parts behind FlashAR's (our variant)."""

    def test_corner_is_the_teachers_first_token(self):
        """Before any image cell the diagonal mask is causal: the branch copied from the backbone's
        tail gives the teacher's logits of token 0 at <begin_of_image>, in H and in V alike."""
        import janus_model as jm
        from flashar_janus import JanusFlashAR
        base, _ = tiny_janus()
        m = JanusFlashAR.from_gpt(base, 1, prompt_tokens=6, pad_id=1).eval()
        ids, mask = janus_prompts()
        tok = torch.randint(0, 16, (2, 16))
        with torch.no_grad():
            want = base.forward_train(ids, mask.bool(), tok)[:, 0]
            h, v = m(tok, ids, emb_mask=mask)
        self.assertLess((h[:, 5] - want).abs().max().item(), 1e-4)
        self.assertLess((v[:, 5] - want).abs().max().item(), 1e-4)
        self.assertIsInstance(m.vertical.gen_head, jm.VisionHead)

    def test_null_condition_is_janus_unconditional_prompt(self):
        import janus_model as jm
        _, m = tiny_janus()
        ids, _ = janus_prompts()
        null = m.null_condition(ids)
        self.assertEqual(null[0].tolist(), [1, 1] + jm.uncond_ids([3, 9, 8, 4], 1).tolist())
        self.assertEqual(null[1].tolist(), jm.uncond_ids(ids[1], 1).tolist())

    def test_decoding_matches_teacher_forcing(self):
        _, m = tiny_janus(grid=5)
        ids, mask = janus_prompts()
        st = {}
        out, fc, mixed = fm.generate_diagonal(m, ids, 3.0, generator=torch.Generator().manual_seed(2), stats=st,
                                              return_logits=True, emb_mask=mask)
        self.assertEqual(st["forwards"], 9)
        with torch.no_grad():
            tf = m.fused_logits(out, ids, emb_mask=mask)
            tfu = m.fused_logits(out, m.null_condition(ids), emb_mask=mask)
        self.assertLess((fc - tf).abs().max().item(), 1e-4, "KV-cache step = teacher-forced diagonal mask")
        self.assertLess((mixed - (tfu + 3.0 * (tf - tfu))).abs().max().item(), 1e-3, "CFG on the unconditional prompt")

    def test_file_is_a_converted_janus_plus_the_branch(self):
        import convert_janus as cj
        from flashar_janus import save_janus_flashar
        base, m = tiny_janus()
        meta = {"vkspec.kind": "gpt", "vkspec.family": "janus-pro", "dim": "32", "n_layer": "2", "n_head": "2",
                "n_kv_head": "2", "ffn_hidden": "64", "text_vocab_size": "40", "vocab_size": "16",
                "image_embed_dim": "8", "head_hidden": "24", "rope_base": "10000.0", "norm_eps": "1e-06",
                "grid_size": "4", "cls_token_num": "6", "pad_id": "1", "tokenizer": "t.json"}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.safetensors")
            save_janus_flashar(m, path, meta)
            sd, got = load_file(path)
            names = set(cj.plan(base.cfg)) | {"vertical.norm.weight", "gate.fc1.weight", "gate.fc2.weight",
                                              "gate.fc2.bias"}
            names |= {"vertical." + k for k in cj.layer_plan(base.cfg, "", "layers.0.")}
            names |= {"vertical." + k for k in cj.head_plan(base.cfg, "", "gen_head.")}
            self.assertEqual(set(sd), names)
            self.assertEqual(sd["vertical.gen_head.vision_head.weight"].dtype, torch.float16)
            self.assertEqual(sd["vertical.gen_head.vision_head.bias"].dtype, torch.float32)
            self.assertEqual((got["role"], got["vkspec.family"], got["tokenizer"], got["flashar.vertical_start_layer"]),
                             ("flashar", "janus-pro", "t.json", "1"))
            m2, _ = fm.load_flashar(path)
        ids, mask = janus_prompts()
        tok = torch.randint(0, 16, (2, 16))
        with torch.no_grad():
            a, b = m.fused_logits(tok, ids, mask), m2.fused_logits(tok, ids, mask)
        self.assertLess((a - b).abs().max().item(), 0.05, "f16 round trip")


def tiny_lumina(grid=4, prompt_tokens=10):
    """A random tiny Lumina-mGPT and a perturbed FlashAR on it; its condition: BOS, two text ids,
    the separator, image start and sizes, right-aligned (one padding position)."""
    import lumina_model as lm
    from flashar_lumina import LuminaFlashAR
    base = lm.random_tiny(dim=32, n_layer=2, n_head=2, ffn_hidden=64, image_codes=16, scale=0.3, seed=1)
    m = LuminaFlashAR.from_gpt(base, 1, prompt_tokens=prompt_tokens, grid=grid)
    with torch.no_grad():
        for p in m.vertical.parameters():
            p.mul_(1.0 + 0.3 * torch.randn_like(p))
        m.gate.fc2.weight.normal_(0, 1.0)
    ids = [lm.BOS, 300, 301, lm.SEP] + lm.image_prefix(grid, grid)
    lab = torch.full((1, prompt_tokens), lm.PAD, dtype=torch.long)
    lab[0, prompt_tokens - len(ids):] = torch.tensor(ids)
    return base, m.eval(), lab, (lab != lm.PAD).long()


class LuminaTest(unittest.TestCase):
    """flashar_lumina: the line breaks' place on the diagonals (our variant)."""

    def test_breaks_follow_their_row_ends(self):
        from flashar_lumina import break_layout, break_mask, break_sources
        W, P = 4, 3
        cell, brk, S, diag = break_layout(W, P)
        self.assertEqual(S, P + W * W + W - 1)
        self.assertEqual(brk.tolist(), [P + r * (W + 1) + W for r in range(W - 1)])
        m = break_mask(W, P)
        for r in range(W - 1):
            end = int(cell[r * W + W - 1])
            self.assertEqual(int(brk[r]), end + 1, "right after the row end, as released")
            self.assertFalse(m[end, brk[r]], "the row end does not see its own break")
            self.assertTrue(m[brk[r], end] and m[brk[r], brk[r]])
            for q in range(P, S):  # every other query sees the break exactly when it sees the row end
                if q != end:
                    self.assertEqual(bool(m[q, brk[r]]), bool(m[q, end]), (q, r))
        _, v_src, _ = break_sources(W, P)
        self.assertEqual(int(v_src[W + W - 1]), int(brk[0]), "V of (1, W-1) is read at row 0's break")
        self.assertEqual(int(v_src[W + 1]), int(cell[1]))

    def test_corner_and_no_leak(self):
        """The untrained branch's corner is the teacher's first image token; the fused logits of
        a diagonal do not move when its own or later cells change."""
        import lumina_model as lm
        from flashar_lumina import LuminaFlashAR
        base, m, lab, mask = tiny_lumina()
        plain = LuminaFlashAR.from_gpt(base, 1, prompt_tokens=10, grid=4).eval()
        codes = torch.randint(0, 16, (1, 16), generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            want = base.teacher_forced([lm.BOS, 300, 301, lm.SEP], codes.view(4, 4))[0][0, 4:20]
            h, v = plain(codes, lab, emb_mask=mask)
            self.assertLess((h[0, 9] - want).abs().max().item(), 1e-4)
            self.assertLess((v[0, 9] - want).abs().max().item(), 1e-4)
            d = fm.diagonal_index(4)
            for k in range(7):
                other = codes.clone()
                other[0, d >= k] = (other[0, d >= k] + 5) % 16
                a = m.fused_logits(codes, lab, mask)[0, d == k]
                b = m.fused_logits(other, lab, mask)[0, d == k]
                self.assertLess((a - b).abs().max().item(), 1e-5, f"diagonal {k}")

    def test_unconditional_row_keeps_the_layout_tokens(self):
        _, m, lab, mask = tiny_lumina()
        self.assertEqual(m.null_emb_mask(mask)[0].tolist(), [0] * 7 + [1] * 3)
        with self.assertRaises(ValueError):
            fm.generate_diagonal(m, lab, 2.0, emb_mask=mask)

    def test_file_round_trip(self):
        import convert_lumina as cl
        import lumina_model as lm
        from flashar_lumina import decode_teacher_forced, load_lumina_flashar, save_lumina_flashar
        base, m, lab, mask = tiny_lumina()
        with tempfile.TemporaryDirectory() as d:
            lm.save_checkpoint_folder(base, os.path.join(d, "hf"), dtype=torch.float32)
            cl.convert_model(os.path.join(d, "hf"), os.path.join(d, "base"), size=64, prompt_tokens=10)
            path = os.path.join(d, "f.safetensors")
            save_lumina_flashar(m, path, os.path.join(d, "base.safetensors"))
            sd, meta = load_file(path)
            self.assertEqual((meta["role"], meta["vkspec.family"]), ("flashar", "lumina-mgpt"))
            self.assertIn("vertical.layers.0.attention.q_norm.bias", sd)
            self.assertEqual(list(sd["vertical.output.weight"].shape), [16, 32])
            m2, _ = fm.load_flashar(path)
        codes = torch.randint(0, 16, (1, 16))
        with torch.no_grad():
            self.assertLess((m.fused_logits(codes, lab, mask) - m2.fused_logits(codes, lab, mask)).abs().max().item(),
                            1e-4)
        out, guided = decode_teacher_forced(m2, lab, mask, 4.0)
        self.assertTrue(torch.equal(out[0], guided[0].argmax(-1)))


if __name__ == "__main__":
    unittest.main(verbosity=1)
