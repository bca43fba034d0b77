"""tools/t5_model.py, the T5 v1.1 encoder reference, and tools/convert_t5.py: the relative
position buckets against hand-computed values, the padding mask, the Hugging Face folder layout
(sharded safetensors, a full .bin checkpoint with its decoder) and its refusals, and the
converted file: names, shapes, dtypes, metadata, and an engine-contract forward written from the
converted tensors alone that reproduces the reference.

usage: test_t5_model.py
"""
import json
import math
import os
import subprocess
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
import convert_t5 as ct  # noqa: E402
import t5_model as t5  # noqa: E402
from safetensors_io import load_file, save_file  # noqa: E402

IDS = [5, 9, 3, 17, 100, 42]
LENGTH = 10


def padded(ids, length):
    row = torch.zeros(1, length, dtype=torch.long)
    row[0, :len(ids)] = torch.tensor(ids)
    mask = torch.zeros(1, length, dtype=torch.long)
    mask[0, :len(ids)] = 1
    return row, mask


def rel_err(got, want):
    return ((got - want).abs().max() / want.abs().max()).item()


# ----------------------------------------------------------------------------------------------
# The engine's contract, from the converted file only (float64)
# ----------------------------------------------------------------------------------------------
def contract_bucket(rel, num_buckets, max_distance):
    half = num_buckets // 2
    exact = half // 2
    base = half if rel > 0 else 0
    r = abs(rel)
    if r < exact:
        return base + r
    return base + min(half - 1, exact + int(math.log(r / exact) / math.log(max_distance / exact) * (half - exact)))


def contract_rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def contract_layer(t, i, h, bias, m):
    H, dk, F = int(m["n_head"]), int(m["d_kv"]), int(m["d_ff"])
    eps = float(m["norm_eps"])
    T = h.shape[0]
    x = contract_rms(h, t[f"layers.{i}.attention_norm.weight"], eps)
    q, k, v = (x @ w.T for w in t[f"layers.{i}.attention.wqkv.weight"].split(H * dk))
    q, k, v = (z.reshape(T, H, dk).transpose(0, 1) for z in (q, k, v))
    att = torch.softmax(q @ k.transpose(1, 2) + bias, dim=-1) @ v
    h = h + att.transpose(0, 1).reshape(T, H * dk) @ t[f"layers.{i}.attention.wo.weight"].T
    x = contract_rms(h, t[f"layers.{i}.ffn_norm.weight"], eps)
    gate, up = (x @ w.T for w in t[f"layers.{i}.feed_forward.wi.weight"].split(F))
    gelu = 0.5 * gate * (1 + torch.tanh(math.sqrt(2 / math.pi) * (gate + 0.044715 * gate ** 3)))
    return h + (gelu * up) @ t[f"layers.{i}.feed_forward.wo.weight"].T


def contract_forward(t, m, ids, mask):
    """ids, mask: 1-D lists -> hidden [T, d_model] f64."""
    t = {k: v.double() for k, v in t.items()}
    T = len(ids)
    nb, md = int(m["num_buckets"]), int(m["max_distance"])
    buckets = torch.tensor([[contract_bucket(j - i, nb, md) for j in range(T)] for i in range(T)])
    bias = t["relative_attention_bias.weight"][buckets].permute(2, 0, 1).clone()
    bias[:, :, torch.tensor(mask) == 0] += torch.finfo(torch.float64).min
    h = t["token_embeddings.weight"][torch.tensor(ids)]
    for i in range(int(m["n_layer"])):
        h = contract_layer(t, i, h, bias, m)
    return contract_rms(h, t["final_norm.weight"], float(m["norm_eps"]))


class BucketTest(unittest.TestCase):
    def test_hand_computed(self):
        # 32 buckets, 128 max distance: 16 per sign, 8 exact; large r: 8 + int(log(r/8)/log(16) * 8)
        want = {0: 0, 1: 17, -1: 1, 7: 23, -7: 7, -8: 8, 8: 24, 10: 24, 15: 25, 20: 26, -20: 10, 50: 29, -50: 13,
                100: 31, 200: 31, -200: 15, 1000: 31}
        rel = torch.tensor(list(want))
        got = t5.relative_position_bucket(rel, 32, 128).tolist()
        self.assertEqual(dict(zip(want, got)), want)

    def test_other_sizes(self):
        # 8 buckets, 16 max: 4 per sign, 2 exact; r=3: 2 + int(log(1.5)/log(8) * 2) = 2; r=6: 2 + int(1.057) = 3
        rel = torch.tensor([0, 1, 2, 3, 6, 50, -1, -3, -6])
        self.assertEqual(t5.relative_position_bucket(rel, 8, 16).tolist(), [0, 5, 6, 6, 7, 7, 1, 2, 3])


class EncoderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.model = t5.random_tiny(seed=1).double()

    def test_padding_is_invisible_to_real_tokens(self):
        row, mask = padded(IDS, LENGTH)
        full = self.model.encode(row, mask)[0]
        alone = self.model.encode(torch.tensor([IDS]))[0]
        self.assertLess(rel_err(full[:len(IDS)], alone), 1e-12)
        row[0, len(IDS):] = 77  # other padding ids change nothing that is not padding
        self.assertLess(rel_err(self.model.encode(row, mask)[0, :len(IDS)], alone), 1e-12)
        unmasked = self.model.encode(row, torch.ones_like(mask))[0, :len(IDS)]
        self.assertGreater(rel_err(unmasked, alone), 1e-3)

    def test_batch_rows_are_independent(self):
        a, ma = padded(IDS, LENGTH)
        b, mb = padded(IDS[:3], LENGTH)
        both = self.model.encode(torch.cat([a, b]), torch.cat([ma, mb]).bool())
        self.assertLess(rel_err(both[1], self.model.encode(b, mb)[0]), 1e-12)

    def test_f32_tracks_f64(self):
        m32 = t5.random_tiny(seed=1)
        row, mask = padded(IDS, LENGTH)
        h32 = m32.encode(row, mask)
        self.assertEqual(h32.dtype, torch.float32)
        self.assertLess(rel_err(h32.double(), self.model.encode(row, mask)), 1e-4)

    def test_config_refusals(self):
        base = t5.T5Config(d_model=64, n_layer=2, n_head=4, d_kv=16, d_ff=96, vocab=128).to_dict()
        self.assertEqual(t5.T5Config.from_dict(base), t5.T5Config(d_model=64, n_layer=2, n_head=4, d_kv=16,
                                                                   d_ff=96, vocab=128))
        for change, pattern in (({"feed_forward_proj": "relu"}, "'relu'"), ({"feed_forward_proj": "gated-silu"},
                                                                             "'gated-silu'"),
                                ({"model_type": "umt5"}, "umt5"), ({"dense_act_fn": "relu"}, "dense_act_fn")):
            with self.assertRaisesRegex(ValueError, pattern):
                t5.T5Config.from_dict(dict(base, **change))
        no_proj = {k: v for k, v in base.items() if k not in ("feed_forward_proj", "dense_act_fn", "is_gated_act")}
        with self.assertRaisesRegex(ValueError, "'relu'"):  # HF's default: T5 v1.0
            t5.T5Config.from_dict(no_proj)


class FolderTest(unittest.TestCase):
    def setUp(self):
        self.model = t5.random_tiny(seed=2)
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def encode(self, m):
        return m.encode(*padded(IDS, LENGTH))

    def test_sharded_round_trip(self):
        t5.save_checkpoint_folder(self.model, self.dir, shards=3)
        with open(os.path.join(self.dir, "model.safetensors.index.json")) as f:
            index = json.load(f)
        self.assertEqual(len(set(index["weight_map"].values())), 3)
        self.assertEqual(set(index["weight_map"]), set(self.model.state_dict()))
        back = t5.load_checkpoint_folder(self.dir)
        for k, v in self.model.state_dict().items():
            self.assertTrue(torch.equal(back.state_dict()[k], v), k)
        self.assertTrue(torch.equal(self.encode(back), self.encode(self.model)))

    def full_checkpoint(self, extra_names=(), drop=()):
        """pytorch_model.bin as a T5ForConditionalGeneration holds it: decoder, lm_head, tied embeddings."""
        sd = {k: v.clone() for k, v in self.model.state_dict().items() if k not in drop}
        sd["encoder.embed_tokens.weight"] = self.model.shared.weight.detach().clone()
        sd["decoder.embed_tokens.weight"] = self.model.shared.weight.detach().clone()
        sd["decoder.block.0.layer.1.EncDecAttention.q.weight"] = torch.randn(64, 64)
        sd["lm_head.weight"] = torch.randn(128, 64)
        for name in extra_names:
            sd[name] = torch.randn(32, 4)
        t5.write_json(self.dir, "config.json", dict(self.model.cfg.to_dict(), architectures=[
            "T5ForConditionalGeneration"], num_decoder_layers=2))
        torch.save(sd, os.path.join(self.dir, "pytorch_model.bin"))

    def test_full_checkpoint_with_decoder(self):
        self.full_checkpoint()
        self.assertTrue(torch.equal(self.encode(t5.load_checkpoint_folder(self.dir)), self.encode(self.model)))

    def test_only_the_tied_embedding(self):
        self.full_checkpoint(drop=("shared.weight",))
        self.assertTrue(torch.equal(self.encode(t5.load_checkpoint_folder(self.dir)), self.encode(self.model)))

    def test_refusals(self):
        missing = "encoder.block.1.layer.1.DenseReluDense.wo.weight"
        self.full_checkpoint(drop=(missing,))
        with self.assertRaisesRegex(ValueError, "missing tensors: " + missing.replace(".", r"\.")):
            t5.load_checkpoint_folder(self.dir)
        extra = "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"
        self.full_checkpoint(extra_names=(extra,))
        with self.assertRaisesRegex(ValueError, "unexpected tensors: " + extra.replace(".", r"\.")):
            t5.load_checkpoint_folder(self.dir)
        t5.save_checkpoint_folder(self.model, self.dir)
        os.remove(os.path.join(self.dir, "pytorch_model.bin"))
        t5.write_json(self.dir, "config.json", dict(self.model.cfg.to_dict(), d_ff=80))
        with self.assertRaisesRegex(ValueError, r"wi_0\.weight has shape \[96, 64\], config\.json says \[80, 64\]"):
            t5.load_checkpoint_folder(self.dir)
        t5.write_json(self.dir, "config.json", dict(self.model.cfg.to_dict(), feed_forward_proj="relu"))
        with self.assertRaisesRegex(ValueError, "feed_forward_proj 'relu'"):
            t5.load_checkpoint_folder(self.dir)


class ConvertTest(unittest.TestCase):
    def setUp(self):
        self.model = t5.random_tiny(seed=3)
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "flan-t5-tiny")

    def tearDown(self):
        self.tmp.cleanup()

    def convert(self, to="keep", name="t5"):
        out = os.path.join(self.tmp.name, "out", name)
        meta = ct.convert(self.dir, out, to)
        t, file_meta = load_file(out + ".safetensors")
        self.assertEqual(meta, file_meta)
        return t, file_meta, out

    def test_layout_and_metadata(self):
        t5.save_checkpoint_folder(self.model, self.dir, shards=2)
        with open(os.path.join(self.dir, "spiece.model"), "wb") as f:
            f.write(b"\x0a\x05piece")
        t, m, out = self.convert()
        sd = self.model.state_dict()
        want = {"token_embeddings.weight": [128, 64], "relative_attention_bias.weight": [32, 4],
                "final_norm.weight": [64]}
        for i in range(2):
            q = f"layers.{i}."
            want.update({q + "attention_norm.weight": [64], q + "attention.wqkv.weight": [192, 64],
                         q + "attention.wo.weight": [64, 64], q + "ffn_norm.weight": [64],
                         q + "feed_forward.wi.weight": [192, 64], q + "feed_forward.wo.weight": [64, 96]})
        self.assertEqual({k: list(v.shape) for k, v in t.items()}, want)
        self.assertEqual(m, {"vkspec.kind": "t5_encoder", "d_model": "64", "n_layer": "2", "n_head": "4", "d_kv": "16",
                             "d_ff": "96", "vocab_size": "128", "num_buckets": "32", "max_distance": "128",
                             "norm_eps": "1e-06", "feed_forward_proj": "gated-gelu",
                             "source": "flan-t5-tiny (convert_t5.py 1)", "tokenizer": "t5.spiece.model"})
        with open(out + ".spiece.model", "rb") as f:
            self.assertEqual(f.read(), b"\x0a\x05piece")
        p = "encoder.block.1.layer."
        self.assertTrue(torch.equal(t["layers.1.attention.wqkv.weight"], torch.cat(
            [sd[p + f"0.SelfAttention.{x}.weight"] for x in "qkv"])))
        self.assertTrue(torch.equal(t["layers.1.feed_forward.wi.weight"], torch.cat(
            [sd[p + "1.DenseReluDense.wi_0.weight"], sd[p + "1.DenseReluDense.wi_1.weight"]])))
        self.assertTrue(torch.equal(t["relative_attention_bias.weight"],
                                    sd["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]))
        self.assertTrue(torch.equal(t["token_embeddings.weight"], sd["shared.weight"]))

    def test_dtypes(self):
        t5.save_checkpoint_folder(self.model, self.dir, dtype=torch.bfloat16)
        t, m, _ = self.convert()
        self.assertNotIn("tokenizer", m)
        for k, v in t.items():
            f32 = k.endswith("norm.weight") or k == "relative_attention_bias.weight"
            self.assertEqual(v.dtype, torch.float32 if f32 else torch.bfloat16, k)
        t, _, _ = self.convert("f16", "half")
        self.assertEqual(t["layers.0.attention.wqkv.weight"].dtype, torch.float16)
        self.assertEqual(t["token_embeddings.weight"].dtype, torch.float16)
        self.assertEqual(t["layers.0.ffn_norm.weight"].dtype, torch.float32)

    def test_engine_contract_reproduces_the_reference(self):
        t5.save_checkpoint_folder(self.model, self.dir, shards=3)
        t, m, _ = self.convert()
        ref = self.model.double()
        row, mask = padded(IDS, LENGTH)
        want = ref.encode(row, mask)[0]
        got = contract_forward(t, m, row[0].tolist(), mask[0].tolist())
        self.assertLess(rel_err(got, want), 1e-5)
        # the check is sharp: the halves of wi swapped (a layout mistake) is far off
        swapped = dict(t)
        for i in range(2):
            wi = t[f"layers.{i}.feed_forward.wi.weight"]
            swapped[f"layers.{i}.feed_forward.wi.weight"] = torch.cat([wi[96:], wi[:96]])
        self.assertGreater(rel_err(contract_forward(swapped, m, row[0].tolist(), mask[0].tolist()), want), 1e-2)

    def test_full_bin_checkpoint_converts(self):
        os.makedirs(self.dir)
        sd = dict(self.model.state_dict())
        sd["decoder.final_layer_norm.weight"] = torch.ones(64)
        sd["lm_head.weight"] = torch.randn(128, 64)
        sd["encoder.embed_tokens.weight"] = sd["shared.weight"].clone()
        torch.save(sd, os.path.join(self.dir, "pytorch_model.bin"))
        t5.write_json(self.dir, "config.json", self.model.cfg.to_dict())
        ct.convert(self.dir, os.path.join(self.tmp.name, "bin"))
        t, _ = load_file(os.path.join(self.tmp.name, "bin.safetensors"))
        self.assertEqual(len(t), 3 + 6 * 2)

    def test_refusals_and_cli(self):
        t5.save_checkpoint_folder(self.model, self.dir)
        t5.write_json(self.dir, "config.json", dict(self.model.cfg.to_dict(), feed_forward_proj="relu"))
        with self.assertRaisesRegex(ValueError, "feed_forward_proj 'relu'"):
            ct.convert(self.dir, os.path.join(self.tmp.name, "x"))
        sd = {k: v for k, v in self.model.state_dict().items() if "block.1.layer.0.SelfAttention.k" not in k}
        save_file(sd, os.path.join(self.dir, "model.safetensors"))
        t5.write_json(self.dir, "config.json", self.model.cfg.to_dict())
        r = subprocess.run([sys.executable, os.path.join(HERE, "convert_t5.py"), self.dir,
                            os.path.join(self.tmp.name, "x")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"convert_t5: {self.dir}: missing tensors: encoder.block.1.layer.0.SelfAttention.k.weight",
                      r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x.safetensors")))


class ReferenceCliTest(unittest.TestCase):
    def test_make_and_encode(self):
        with tempfile.TemporaryDirectory() as d:
            ref = os.path.join(HERE, "reference.py")
            run = lambda *a: subprocess.run([sys.executable, ref, *a], check=True, capture_output=True)  # noqa: E731
            run("make-t5", d, "--shards", "2", "--seed", "4")
            run("t5-encode", d, "--ids", "5,9,3", "--length", "8", "--out", os.path.join(d, "h.safetensors"))
            h, _ = load_file(os.path.join(d, "h.safetensors"))
            want = t5.random_tiny(seed=4).double().encode(*padded([5, 9, 3], 8))[0].float()
            self.assertEqual(list(h["hidden"].shape), [8, 64])
            self.assertLess(rel_err(h["hidden"], want), 1e-6)


if __name__ == "__main__":
    unittest.main()
