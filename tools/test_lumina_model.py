"""tools/lumina_model.py, the Lumina-mGPT reference: its cached generation against teacher forcing,
the image layout, the q/k norm grouping, the CFG stream's position shift (what the engine's CFG
row relies on), the released folder layout, and its refusals; tools/chameleon_vqgan.py's released
files and tools/convert_lumina.py --vqgan (names, refusals).

usage: test_lumina_model.py   (CTest tools.lumina_model)
"""
import json
import math
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


def engine_forward(t, meta, prompt_ids, codes):
    """The converted file read as the engine's lumina-mgpt family will: the prefix's rows of
    text_embeddings (prompt, image start, size tokens), then image_embeddings rows (code c; the
    line break at placed_id) at consecutive positions, RMSNorm blocks with wqkv, each head's q and
    k LayerNorm'd with the stored (permuted) vectors of its group, RoPE on INTERLEAVED pairs,
    final norm, output.weight: logits over the codes at the positions that predict each code."""
    t = {k: v.float() for k, v in t.items()}
    D, H, eps = int(meta["dim"]), int(meta["n_head"]), float(meta["norm_eps"])
    hd, base, groups = D // H, float(meta["rope_base"]), int(meta["qk_norm_groups"])
    rows, cols = codes.shape
    prefix = list(prompt_ids) + lm.image_prefix(rows, cols)
    placed = int(meta["placed_id"])
    image = []
    for r in range(rows):
        image += codes[r].tolist() + ([placed] if r + 1 < rows else [])
    x = torch.cat([t["text_embeddings.weight"][torch.tensor(prefix)], t["image_embeddings.weight"][torch.tensor(image)]])
    S = x.shape[0]
    ang = torch.arange(S).float()[:, None] * base ** (-torch.arange(0, hd, 2).float() / hd)
    cos, sin = ang.cos(), ang.sin()

    def rms(v, w):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * w

    def head_norm(v, w, b):  # v [S, H, hd]; w, b [groups, hd]
        n = F.layer_norm(v, (hd,), None, None, float(meta["qk_norm_eps"]))
        per = H // groups
        return n * w.repeat_interleave(per, 0) + b.repeat_interleave(per, 0)

    def rope(v):  # [S, H, hd]
        a, b = v[..., 0::2], v[..., 1::2]
        return torch.stack([a * cos[:, None] - b * sin[:, None], b * cos[:, None] + a * sin[:, None]], -1).flatten(-2)
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    for i in range(int(meta["n_layer"])):
        p = f"layers.{i}."
        q, k, v = (rms(x, t[p + "attention_norm.weight"]) @ t[p + "attention.wqkv.weight"].t()).split(D, -1)
        q = rope(head_norm(q.view(S, H, hd), t[p + "attention.q_norm.weight"], t[p + "attention.q_norm.bias"]))
        k = rope(head_norm(k.view(S, H, hd), t[p + "attention.k_norm.weight"], t[p + "attention.k_norm.bias"]))
        att = (q.transpose(0, 1) @ k.permute(1, 2, 0) / math.sqrt(hd)).masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + (att @ v.view(S, H, hd).transpose(0, 1)).transpose(0, 1).reshape(S, D) @ t[p + "attention.wo.weight"].t()
        h = rms(x, t[p + "ffn_norm.weight"])
        x = x + (F.silu(h @ t[p + "feed_forward.w1.weight"].t()) * (h @ t[p + "feed_forward.w3.weight"].t())) @ \
            t[p + "feed_forward.w2.weight"].t()
    logits = rms(x, t["norm.weight"]) @ t["output.weight"].t()
    n = torch.arange(rows * cols)
    return logits[len(prefix) - 1 + n + n // cols]  # each finished row's break shifts the rest by one


class ConvertLuminaTest(unittest.TestCase):
    def convert(self, model, **kw):
        import convert_lumina as cl
        from safetensors_io import load_file
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        lm.save_checkpoint_folder(model, os.path.join(d, "hf"), dtype=torch.float32, shards=2)
        meta = cl.convert_model(os.path.join(d, "hf"), os.path.join(d, "out"), **kw)
        t, m = load_file(os.path.join(d, "out.safetensors"))
        self.assertEqual(meta["vkspec.family"], m["vkspec.family"])
        return t, m

    def test_engine_contract_reproduces_the_reference(self):
        for groups in (1, 2):
            model = lm.random_tiny(vocab=9216, seed=5, scale=0.08, groups=groups)
            t, m = self.convert(model, size=64, prompt_tokens=12)
            codes = torch.randint(0, 64, (4, 4), generator=torch.Generator().manual_seed(groups))
            want, _ = model.teacher_forced(PROMPT, codes)
            want = want[:, lm.IMAGE_FIRST:lm.IMAGE_FIRST + 64]
            got = engine_forward(t, m, PROMPT, codes)
            self.assertLess((got - want).abs().max().item(), 1e-4 * want.abs().max().item(), groups)

    def test_layout_and_metadata(self):
        model = lm.random_tiny(vocab=9216, seed=5)
        t, m = self.convert(model, size=64, prompt_tokens=12)
        emb = model.model.embed_tokens.weight
        self.assertTrue(torch.equal(t["image_embeddings.weight"][:64], emb[4:68]))
        self.assertTrue(torch.equal(t["image_embeddings.weight"][64], emb[lm.LINE_BREAK]))
        self.assertTrue(torch.equal(t["output.weight"], model.lm_head.weight[4:68]))
        for k, v in {"grid_size": "4", "placed_id": "64", "vocab_size": "64", "text_vocab_size": "9216",
                     "cls_token_num": "12", "cfg": "4", "top_k": "2000", "qk_norm_groups": "1", "swin_norm": "0"}.items():
            self.assertEqual(m[k], v, k)
        self.assertNotIn("tokenizer", m)  # the folder had none
        self.assertNotIn("vq", m)
        _, m = self.convert(model, size=64, prompt_tokens=12, vq="chameleon_vqgan.safetensors")
        self.assertEqual(m["vq"], "chameleon_vqgan.safetensors")

    def test_refusals(self):
        import convert_lumina as cl
        model = lm.random_tiny(vocab=9216, seed=5)
        with tempfile.TemporaryDirectory() as d:
            lm.save_checkpoint_folder(model, d, dtype=torch.float32)
            with self.assertRaisesRegex(ValueError, "multiple of 32"):
                cl.convert_model(d, os.path.join(d, "out"), size=100)
            with self.assertRaisesRegex(ValueError, "no such file"):
                cl.convert_model(d, os.path.join(d, "out"), size=64, tokenizer=os.path.join(d, "none.json"))
            with self.assertRaisesRegex(ValueError, "beside the model"):
                cl.convert_model(d, os.path.join(d, "out"), size=64, vq="models/vq.safetensors")


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
