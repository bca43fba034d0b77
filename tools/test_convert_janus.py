"""convert_janus.py on random tiny Janus-Pro folders made by `reference.py make-janus` (the released
Hugging Face layout): metadata, dtypes, the q/k RoPE permutation, the engine's reading of the
converted file against janus_model.py's forward, .bin checkpoints, the VQ file, and refusals."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import janus_model as jm  # noqa: E402
from convert_janus import convert, load_converted  # noqa: E402
from safetensors_io import load_file, save_file  # noqa: E402
from vkspec_models import VQModel, vq_config_from_metadata  # noqa: E402


def make_janus(folder, *args):
    subprocess.run([sys.executable, os.path.join(HERE, "reference.py"), "make-janus", folder, *args], check=True)


def engine_forward(t, meta, rows, tokens):
    """The converted file read as the engine's contract says: text_embeddings for the prompt,
    gen_aligner(gen_embed(token)) after it, RMSNorm blocks with wqkv (q | k | v) and RoPE on
    INTERLEAVED pairs (2i, 2i + 1) at frequency rope_base^(-2i / head_dim), final norm, gen_head."""
    t = {k: v.float() for k, v in t.items()}
    D, H, eps, base = int(meta["dim"]), int(meta["n_head"]), float(meta["norm_eps"]), float(meta["rope_base"])
    hd = D // H

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def lin(x, name, bias=True):
        return F.linear(x, t[name + ".weight"], t.get(name + ".bias") if bias else None)

    R = rows.shape[0]
    img = lin(F.gelu(lin(t["gen_embed.weight"][tokens], "gen_aligner.layers.0")), "gen_aligner.layers.2")
    x = torch.cat([t["text_embeddings.weight"][rows], img[None].expand(R, -1, -1)], dim=1)
    S = x.shape[1]
    ang = torch.arange(S).float()[:, None] * base ** (-torch.arange(0, hd, 2).float() / hd)
    cos, sin = ang.cos(), ang.sin()

    def rope(v):  # [R, S, H, hd]
        a, b = v[..., 0::2], v[..., 1::2]
        return torch.stack([a * cos[:, None] - b * sin[:, None], b * cos[:, None] + a * sin[:, None]], -1).flatten(-2)
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    for i in range(int(meta["n_layer"])):
        p = f"layers.{i}."
        q, k, v = lin(rms(x, t[p + "attention_norm.weight"]), p + "attention.wqkv", False).split(D, -1)
        q, k, v = (z.view(R, S, H, hd) for z in (q, k, v))
        q, k = rope(q).transpose(1, 2), rope(k).transpose(1, 2)
        att = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + lin((att @ v.transpose(1, 2)).transpose(1, 2).reshape(R, S, D), p + "attention.wo", False)
        h = rms(x, t[p + "ffn_norm.weight"])
        x = x + lin(F.silu(lin(h, p + "feed_forward.w1", False)) * lin(h, p + "feed_forward.w3", False),
                    p + "feed_forward.w2", False)
    h = rms(x, t["norm.weight"])
    return lin(F.gelu(lin(h, "gen_head.output_mlp_projector")), "gen_head.vision_head")


class ConvertJanusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bf16 = cls.path("bf16")            # one file, bf16 as released, no VQ
        make_janus(cls.bf16, "--seed", "1")
        cls.f32 = cls.path("f32")              # three shards, f32, with the VQ decoder
        make_janus(cls.f32, "--dtype", "f32", "--shards", "3", "--vq", "--seed", "2")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.tmp.name, name)

    def convert(self, folder, name, **kw):
        meta = convert(folder, self.path(name), quiet=True, **kw)
        t, m = load_file(self.path(name) + ".safetensors")
        self.assertEqual(meta, {k: (m[k] if isinstance(v, str) else type(v)(m[k])) for k, v in meta.items()})
        return t, m

    def tokens(self, folder):
        tok = jm.ByteBPE.from_file(os.path.join(folder, "tokenizer.json"))
        return tok.encode(jm.sft_prompt("a photo of a coat")), jm.tokenizer_ids(folder)

    def test_metadata_and_kept_bf16(self):
        t, m = self.convert(self.bf16, "a")
        ids = jm.tokenizer_ids(self.bf16)
        want = {"vkspec.kind": "gpt", "vkspec.family": "janus-pro", "dim": "64", "n_layer": "2", "n_head": "4",
                "n_kv_head": "4", "ffn_hidden": "128", "norm_eps": "1e-06", "rope_base": "10000.0",
                "vocab_size": "64", "text_vocab_size": "512", "grid_size": "4", "cls_token_num": "256",
                "image_embed_dim": "8", "head_hidden": "64", "cfg": "5", "temperature": "1", "top_k": "0",
                "top_p": "1", "tokenizer": "a.tokenizer.json", "add_bos": "1",
                "bos_id": str(ids["bos_id"]), "pad_id": str(ids["pad_id"]), "image_start_id": str(ids["image_start_id"]),
                "prompt_template": "<|User|>: {prompt}\n\n<|Assistant|>:<begin_of_image>"}
        for k, v in want.items():
            self.assertEqual(m[k], v, k)
        self.assertNotIn("vq", m)
        self.assertTrue(m["source"].startswith("bf16 (convert_janus.py"))
        self.assertFalse(os.path.exists(self.path("a.vq.safetensors")))
        with open(self.path("a.tokenizer.json"), "rb") as f, open(os.path.join(self.bf16, "tokenizer.json"), "rb") as g:
            self.assertEqual(f.read(), g.read())
        for k, v in t.items():
            f32 = k.endswith("norm.weight") or k.endswith(".bias")
            self.assertEqual(v.dtype, torch.float32 if f32 else torch.bfloat16, k)
        self.assertEqual(list(t["layers.1.attention.wqkv.weight"].shape), [192, 64])
        self.assertEqual(len(t), 2 * 7 + 2 + 9)
        src = jm.CheckpointFolder(self.bf16)
        self.assertTrue(torch.equal(t["text_embeddings.weight"], src.get("language_model.model.embed_tokens.weight")))
        self.assertTrue(torch.equal(t["layers.0.feed_forward.w1.weight"],
                                    src.get("language_model.model.layers.0.mlp.gate_proj.weight")))
        self.assertTrue(torch.equal(t["gen_head.vision_head.bias"], src.get("gen_head.vision_head.bias").float()))
        # the template the metadata carries is what the processor builds
        self.assertEqual(m["prompt_template"].format(prompt="a coat"), jm.sft_prompt("  a coat "))

    def test_dtype_option(self):
        t, _ = self.convert(self.bf16, "h", dtype="f16")
        self.assertEqual(t["layers.0.attention.wo.weight"].dtype, torch.float16)
        self.assertEqual(t["gen_embed.weight"].dtype, torch.float16)
        self.assertEqual(t["norm.weight"].dtype, torch.float32)

    def test_qk_permutation_keeps_attention_scores(self):
        t, m = self.convert(self.bf16, "p")
        src = jm.CheckpointFolder(self.bf16)
        D, H = 64, 4
        hd = D // H
        g = torch.Generator().manual_seed(0)
        x = torch.randn(7, D, generator=g)
        pos = torch.arange(7) * 3 + 2
        for layer in range(2):
            p = f"language_model.model.layers.{layer}.self_attn."
            wq, wk, wv = (src.get(p + f"{n}_proj.weight").float() for n in "qkv")
            cos, sin = jm.rope_cos_sin(pos, hd, 10000.0)
            q = jm.apply_rope_half((x @ wq.t()).view(7, H, hd).transpose(0, 1), cos, sin)
            k = jm.apply_rope_half((x @ wk.t()).view(7, H, hd).transpose(0, 1), cos, sin)
            hf = q @ k.transpose(-1, -2)
            cq, ck, cv = t[f"layers.{layer}.attention.wqkv.weight"].float().split(D)
            self.assertTrue(torch.equal(cv, wv))
            self.assertFalse(torch.equal(cq, wq))
            ang = pos.float()[:, None] * 10000.0 ** (-torch.arange(0, hd, 2).float() / hd)

            def inter(v):
                a, b = v[..., 0::2], v[..., 1::2]
                return torch.stack([a * ang.cos() - b * ang.sin(), b * ang.cos() + a * ang.sin()], -1).flatten(-2)
            cq_h, ck_h = ((x @ w.t()).view(7, H, hd).transpose(0, 1) for w in (cq, ck))
            ours = inter(cq_h) @ inter(ck_h).transpose(-1, -2)
            self.assertLess((ours - hf).abs().max().item(), 1e-4 * hf.abs().max().item())

    def test_engine_contract_reproduces_the_reference(self):
        t, m = self.convert(self.bf16, "c")
        model, _ = jm.load_checkpoint_folder(self.bf16, quiet=True)
        ids, tok = self.tokens(self.bf16)
        self.assertEqual((ids[0], ids[-1]), (tok["bos_id"], tok["image_start_id"]))
        rows = torch.stack([torch.tensor(ids), jm.uncond_ids(ids, tok["pad_id"])])
        self.assertEqual(rows[1].tolist(), [ids[0]] + [tok["pad_id"]] * (len(ids) - 2) + [ids[-1]])
        toks = torch.tensor([3, 17, 5, 60, 0])
        with torch.no_grad():
            want = model.teacher_forced_logits(rows, toks)
            got = engine_forward(t, m, rows, toks)
        self.assertLess((got - want).abs().max().item(), 1e-4 * want.abs().max().item())

    def test_load_converted_undoes_the_conversion(self):
        # f32 kept: the model back from the converted file is the folder's exactly
        self.convert(self.f32, "back")
        back, meta = load_converted(self.path("back") + ".safetensors")
        model, _ = jm.load_checkpoint_folder(self.f32, quiet=True)
        want = model.state_dict()
        self.assertEqual(set(back.state_dict()), set(want))
        for k, v in back.state_dict().items():
            self.assertTrue(torch.equal(v, want[k].float()), k)
        self.assertEqual(meta["vkspec.family"], "janus-pro")
        with self.assertRaisesRegex(ValueError, "not a Janus-Pro file"):
            save_file({"x": torch.zeros(2)}, self.path("other.safetensors"), {"vkspec.kind": "gpt"})
            load_converted(self.path("other.safetensors"))

    def test_greedy_with_cache_matches_teacher_forcing(self):
        model, _ = jm.load_checkpoint_folder(self.f32, quiet=True)
        ids, tok = self.tokens(self.f32)
        out, gaps = model.generate(ids, cfg=5.0, greedy=True, pad_id=tok["pad_id"])
        self.assertEqual(out.numel(), 16)
        self.assertGreater(len(set(out.tolist())), 8)  # make-janus plants a long cycle: no fixed point
        rows = torch.stack([torch.tensor(ids), jm.uncond_ids(ids, tok["pad_id"])])
        with torch.no_grad():
            lg = model.teacher_forced_logits(rows, out[:-1])[:, len(ids) - 1:]
        guided = lg[1] + 5.0 * (lg[0] - lg[1])
        self.assertTrue(torch.equal(guided.argmax(-1), out))
        top = guided.topk(2, -1)[0]
        self.assertLess((top[:, 0] - top[:, 1] - gaps).abs().max().item(), 1e-4)
        # sampling with a seed is reproducible
        a, _ = model.generate(ids, pad_id=tok["pad_id"], seed=5)
        b, _ = model.generate(ids, pad_id=tok["pad_id"], seed=5)
        self.assertTrue(torch.equal(a, b))

    def test_forward_train_with_left_padding(self):
        model, _ = jm.load_checkpoint_folder(self.f32, quiet=True)
        ids, tok = self.tokens(self.f32)
        L, pad = len(ids), 4
        toks = torch.tensor([[5, 9, 1, 63, 22, 0, 7, 7, 30, 2, 11, 48, 3, 3, 17, 40]])
        prefix = torch.tensor([[tok["pad_id"]] * pad + ids])
        mask = torch.tensor([[False] * pad + [True] * L])
        with torch.no_grad():
            got = model.forward_train(prefix, mask, toks)
            want = model.teacher_forced_logits(torch.tensor([ids]), toks[0, :-1])[:, L - 1:]
        self.assertEqual(list(got.shape), [1, 16, 64])
        self.assertLess((got - want).abs().max().item(), 1e-4)

    def test_sharded_f32_with_vq(self):
        t, m = self.convert(self.f32, "v", dtype="keep")
        self.assertEqual(m["vq"], "v.vq.safetensors")
        self.assertTrue(all(v.dtype == torch.float32 for v in t.values()))
        vt, vm = load_file(self.path("v.vq.safetensors"))
        self.assertEqual((vm["vkspec.kind"], vm["ch"], vm["ch_mult"], vm["codebook_size"], vm["in_channels"]),
                         ("vq", "32", "1,2", "64", "3"))
        self.assertNotIn("quantize.codebook_used", vt)
        self.assertEqual(vt["decoder.conv_in.weight"].dtype, torch.float16)
        self.assertEqual(vt["quantize.embedding.weight"].dtype, torch.float32)
        vq = VQModel(vq_config_from_metadata(vm)).eval()
        vq.load_state_dict({k: v.float() for k, v in vt.items()})
        _, ref = jm.load_checkpoint_folder(self.f32, with_vq=True, quiet=True)
        idx = torch.arange(16).reshape(1, 4, 4) * 3
        with torch.no_grad():
            self.assertLess((vq.decode_code(idx) - ref.decode_code(idx)).abs().max().item(), 2e-2)

    def test_pytorch_bin_checkpoints(self):
        want, _ = self.convert(self.bf16, "ref")
        src = jm.CheckpointFolder(self.bf16)
        sd = {k: src.get(k) for k in src.names()}
        sd["language_model.lm_head.weight"] = torch.zeros(512, 64, dtype=torch.bfloat16)  # understanding: skipped
        one, sharded = self.path("bin1"), self.path("bin2")
        for d in (one, sharded):
            shutil.copytree(self.bf16, d, ignore=shutil.ignore_patterns("*.safetensors"))
        torch.save(sd, os.path.join(one, "pytorch_model.bin"))
        names = list(sd)
        wm = {}
        for i, part in enumerate((names[:len(names) // 2], names[len(names) // 2:])):
            fname = f"pytorch_model-0000{i + 1}-of-00002.bin"
            torch.save({k: sd[k] for k in part}, os.path.join(sharded, fname))
            wm.update({k: fname for k in part})
        with open(os.path.join(sharded, "pytorch_model.bin.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": wm}, f)
        for d, name in ((one, "b1"), (sharded, "b2")):
            t, _ = self.convert(d, name)
            self.assertEqual(set(t), set(want))
            for k in want:
                self.assertTrue(torch.equal(t[k], want[k]), f"{name}: {k}")

    def test_understanding_tensors_are_skipped(self):
        model, _ = jm.load_checkpoint_folder(self.bf16, quiet=True)
        d = self.path("und")
        jm.save_checkpoint_folder(model, d, os.path.join(self.bf16, "tokenizer.json"), understanding=True)
        self.assertIn("language_model.lm_head.weight", jm.CheckpointFolder(d).names())
        t, _ = self.convert(d, "und")
        self.assertNotIn("language_model.lm_head.weight", t)
        self.assertNotIn("lm_head.weight", t)

    def broken(self, name, edit_config=None, drop=None):
        d = self.path(name)
        shutil.copytree(self.bf16, d)
        if edit_config:
            with open(os.path.join(d, "config.json")) as f:
                c = json.load(f)
            edit_config(c)
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(c, f)
        if drop:
            t, m = load_file(os.path.join(d, "model.safetensors"))
            save_file({k: v for k, v in t.items() if k not in drop}, os.path.join(d, "model.safetensors"), m)
        return d

    def refused(self, folder, pattern):
        with self.assertRaisesRegex(ValueError, pattern):
            convert(folder, self.path("refused"), quiet=True)
        self.assertFalse(os.path.exists(self.path("refused.safetensors")))

    def test_refusals(self):
        self.refused(self.tmp.name, "no config.json")
        self.refused(self.broken("llama", lambda c: [c.pop(k) for k in list(c) if k.startswith("gen_")]),
                     "not a Janus config.json.*gen_head_config")
        self.refused(self.broken("missing", drop={"gen_head.vision_head.bias", "language_model.model.norm.weight"}),
                     "missing tensors: .*language_model.model.norm.weight.*gen_head.vision_head.bias|"
                     "missing tensors: .*gen_head.vision_head.bias.*language_model.model.norm.weight")
        self.refused(self.broken("gqa", lambda c: c["language_config"].update(num_key_value_heads=2)),
                     "multi-head attention only")
        self.refused(self.broken("shape", lambda c: c["language_config"].update(intermediate_size=96)),
                     r"mlp.gate_proj.weight has shape \[128, 64\], config.json says \[96, 64\]")
        self.refused(self.broken("layers", lambda c: c["language_config"].update(num_hidden_layers=1)),
                     "config does not have.*layers.1")
        self.refused(self.broken("head", lambda c: c["gen_head_config"]["params"].update(image_token_size=32)),
                     "image_token_size = 32, expected 64")
        r = subprocess.run([sys.executable, os.path.join(HERE, "convert_janus.py"), self.path("gqa"), self.path("cli")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("multi-head attention only", r.stderr)


if __name__ == "__main__":
    unittest.main()
