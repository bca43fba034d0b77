"""tools/lumina_model.py, the Lumina-mGPT reference: its cached generation against teacher forcing,
the image layout, the q/k norm grouping, the CFG stream's position shift (what the engine's CFG
row relies on), the released folder layout, and its refusals; tools/chameleon_vqgan.py's released
files and tools/convert_lumina.py --vqgan (names, refusals).

usage: test_lumina_model.py   (CTest tools.lumina_model)
"""
import json
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumina_model as lm  # noqa: E402

PROMPT = [lm.BOS, 9000, 9001, 9002, 9003, lm.SEP]  # ids of a tiny vocabulary's text range


class LuminaModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.model = lm.random_tiny(vocab=9216, seed=1, scale=0.08)

    def test_layout(self):
        codes = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7]])
        self.assertEqual(lm.image_prefix(2, 4), [lm.IMAGE_START, lm.SIZE_BASE + 1, lm.SIZE_BASE + 2])
        toks = lm.layout_tokens(codes)
        self.assertEqual(toks, [4, 5, 6, 7, lm.LINE_BREAK, 8, 9, 10, 11, lm.LINE_BREAK, lm.IMAGE_END])
        offs = lm.image_token_offsets(2, 4)
        self.assertEqual([toks[o] for o in offs.tolist()], [lm.bpe_of_code(c) for c in range(8)])
        self.assertEqual(lm.image_token_name(8191), "IMGIMGIBJBZ")
        self.assertEqual(lm.size_token(48), 8828)  # 768 px
        with self.assertRaises(ValueError):
            lm.size_token(3)
        self.assertEqual(lm.prompt_text("a cat", 768, 512),
                         "Generate an image of 768x512 according to the following prompt:\na cat")

    def test_qk_norm_groups(self):
        x = torch.randn(2, 4, 3, 16)
        for groups in (1, 2, 4):
            n = lm.QkLayerNorm(groups, 16)
            with torch.no_grad():
                n.weight.normal_()
                n.bias.normal_()
            got = n(x)
            for h in range(4):
                g = h // (4 // groups)
                want = F.layer_norm(x[:, h], (16,), n.weight[g], n.bias[g], lm.QK_NORM_EPS)
                self.assertLess((got[:, h] - want).abs().max().item(), 1e-5, (groups, h))

    def test_greedy_with_caches_matches_teacher_forcing(self):
        codes, gaps = self.model.generate(PROMPT, 4, 6, cfg=3.0, greedy=True)
        self.assertGreater(len(set(codes.flatten().tolist())), 3)
        c, u = self.model.teacher_forced(PROMPT, codes)
        guided = (u + 3.0 * (c - u))[:, lm.IMAGE_FIRST:lm.IMAGE_FIRST + self.model.cfg.image_codes]
        want = guided.argmax(-1)
        for n, (a, b) in enumerate(zip(want.tolist(), codes.flatten().tolist())):
            if a != b:
                self.assertLess(gaps[n], 1e-4, f"token {n}: teacher forcing {a}, cached {b}")

    def test_uncond_stream_is_position_shift_invariant(self):
        codes = torch.randint(0, self.model.cfg.image_codes, (4, 6), generator=torch.Generator().manual_seed(3))
        self.assertLess(lm.uncond_positions_shift_invariance(self.model, PROMPT, codes), 1e-4)

    def test_sampling_is_restricted_to_image_tokens(self):
        codes, _ = self.model.generate(PROMPT, 2, 4, cfg=4.0, image_top_k=5, seed=7)
        self.assertTrue(((codes >= 0) & (codes < self.model.cfg.image_codes)).all())

    def test_swin_norm_places_the_norms_after(self):
        pre = lm.random_tiny(vocab=9216, seed=2)
        swin = lm.random_tiny(vocab=9216, seed=2, swin_norm=True)
        swin.load_state_dict(pre.state_dict())
        ids = torch.tensor([PROMPT])
        a, b = pre(ids, torch.arange(len(PROMPT))), swin(ids, torch.arange(len(PROMPT)))
        self.assertGreater((a - b).abs().max().item(), 1e-3)
        layer, x = swin.model.layers[0], swin.model.embed_tokens(ids)
        cos, sin = lm.rope_cos_sin(torch.arange(len(PROMPT)), swin.cfg.head_dim, swin.cfg.rope_theta)
        h = x + layer.input_layernorm(layer.self_attn(x, cos, sin))
        want = h + layer.post_attention_layernorm(layer.mlp(h))
        self.assertLess((layer(x, cos, sin) - want).abs().max().item(), 1e-6)

    def test_folder_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            lm.save_checkpoint_folder(self.model, d, dtype=torch.float32, shards=3)
            self.assertTrue(os.path.isfile(os.path.join(d, "model.safetensors.index.json")))
            back = lm.load_checkpoint_folder(d)
            for k, v in self.model.state_dict().items():
                self.assertTrue(torch.equal(v, back.state_dict()[k]), k)
            self.assertEqual(back.cfg, self.model.cfg)

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "not a Chameleon"):
            lm.LuminaConfig.from_dict({"model_type": "llama"})
        with self.assertRaisesRegex(ValueError, "multi-head"):
            lm.LuminaConfig(dim=64, n_head=4, n_kv_head=2, vocab=9216)
        with self.assertRaisesRegex(ValueError, "layout ids"):
            lm.LuminaConfig(dim=64, n_head=4, vocab=4096)
        with tempfile.TemporaryDirectory() as d:
            lm.save_checkpoint_folder(self.model, d, dtype=torch.float32)
            cfg = lm.read_json(d, "config.json")
            cfg["num_hidden_layers"] = 3
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(cfg, f)
            with self.assertRaisesRegex(ValueError, "missing tensors"):
                lm.load_checkpoint_folder(d)


class ChameleonVqganTest(unittest.TestCase):
    def test_released_files_round_trip_and_conversion(self):
        import chameleon_vqgan as cv
        import convert_lumina as cl
        from safetensors_io import load_file
        m = cv.random_tiny(seed=4)
        codes = torch.randint(0, 64, (1, 3, 2), generator=torch.Generator().manual_seed(0))
        with tempfile.TemporaryDirectory() as d:
            cv.save_released(m, os.path.join(d, "tok"))
            back = cv.load_released(os.path.join(d, "tok"))
            self.assertTrue(torch.equal(m.decode_codes(codes), back.decode_codes(codes)))
            meta = cl.convert_vqgan(os.path.join(d, "tok"), os.path.join(d, "vq"))
            self.assertEqual((meta["codebook_l2_norm"], meta["level_attention"], meta["downsample"]), (0, 0, 2))
            t, _ = load_file(os.path.join(d, "vq.safetensors"))
            # the decoder's deepest level (up.1 in taming's order) is the engine's conv_blocks.0
            self.assertTrue(torch.equal(t["decoder.conv_blocks.0.res.0.conv1.weight"],
                                        m.decoder.up[1].block[0].conv1.weight))
            self.assertTrue(torch.equal(t["decoder.mid.2.norm1.bias"], m.decoder.mid.block_2.norm1.bias))
            self.assertEqual(len(t), len(m.state_dict()))

    def test_conversion_refusals(self):
        import chameleon_vqgan as cv
        import convert_lumina as cl
        with tempfile.TemporaryDirectory() as d:
            cv.save_released(cv.random_tiny(seed=4, attn_resolutions=(16,)), os.path.join(d, "attn"))
            with self.assertRaisesRegex(ValueError, "attn_resolutions"):
                cl.convert_vqgan(os.path.join(d, "attn"), os.path.join(d, "out"))
            m = cv.random_tiny(seed=4)
            cv.save_released(m, os.path.join(d, "cut"))
            sd = {k: v for k, v in m.state_dict().items() if not k.startswith("decoder.conv_out")}
            torch.save({"state_dict": sd}, os.path.join(d, "cut", "vqgan.ckpt"))
            with self.assertRaisesRegex(ValueError, "missing tensors"):
                cl.convert_vqgan(os.path.join(d, "cut"), os.path.join(d, "out"))


if __name__ == "__main__":
    unittest.main()
