"""Converter tests on checkpoints made here with LlamaGen's key names and shapes (random values)."""
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_llamagen import convert  # noqa: E402
from safetensors_io import load_file  # noqa: E402
from vkspec_models import GPT, GPTConfig, VQConfig, VQModel  # noqa: E402


class ConvertTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_gpt_ddp_checkpoint_with_freqs_cis(self):
        cfg = GPTConfig(dim=128, n_layer=2, n_head=2, vocab_size=64, num_classes=5, grid_size=4)
        sd = GPT(cfg).state_dict()
        sd["freqs_cis"] = torch.zeros(17, 32, 2)
        torch.save({"model": sd, "optimizer": {}, "steps": 1}, self.path("g.pt"))
        meta = convert(self.path("g.pt"), self.path("g.safetensors"), "gpt", "f16", n_head=2, grid=4)
        self.assertEqual((meta["dim"], meta["n_layer"], meta["num_classes"]), (128, 2, 5))
        t, m = load_file(self.path("g.safetensors"))
        self.assertNotIn("freqs_cis", t)
        self.assertEqual(t["layers.1.attention.wqkv.weight"].dtype, torch.float16)
        self.assertEqual(t["norm.weight"].dtype, torch.float32)
        self.assertEqual(m["vkspec.kind"], "gpt")
        self.assertTrue(torch.allclose(t["output.weight"].float(), sd["output.weight"], atol=1e-3))

    def test_gpt_raw_state_dict_with_module_prefix(self):
        cfg = GPTConfig(dim=128, n_layer=1, n_head=2, vocab_size=32, num_classes=3, grid_size=2)
        sd = {"module." + k: v for k, v in GPT(cfg).state_dict().items()}
        torch.save(sd, self.path("raw.pt"))
        meta = convert(self.path("raw.pt"), self.path("raw.safetensors"), "gpt", "f32", grid=2)
        self.assertEqual(meta["n_head"], 2)  # dim / 64
        t, _ = load_file(self.path("raw.safetensors"))
        self.assertIn("tok_embeddings.weight", t)

    def test_t2i_checkpoint_is_recognised_by_its_caption_embedder(self):
        cfg = GPTConfig(dim=64, n_layer=1, n_head=2, vocab_size=32, num_classes=0, grid_size=2,
                        cls_token_num=120, model_type="t2i", caption_dim=16)
        sd = GPT(cfg).state_dict()
        sd["freqs_cis"] = torch.zeros(124, 16, 2)
        torch.save({"model": sd}, self.path("t2i.pt"))
        meta = convert(self.path("t2i.pt"), self.path("t2i.safetensors"), "gpt", "f16", n_head=2, grid=2)
        self.assertEqual((meta["model_type"], meta["caption_dim"], meta["cls_token_num"]), ("t2i", 16, 120))
        self.assertNotIn("num_classes", meta)
        t, _ = load_file(self.path("t2i.safetensors"))
        self.assertEqual(list(t["cls_embedding.uncond_embedding"].shape), [120, 16])
        self.assertIn("cls_embedding.cap_proj.fc2.weight", t)
        with self.assertRaisesRegex(ValueError, "uncond_embedding"):
            convert(self.path("t2i.pt"), self.path("t2i.safetensors"), "gpt", "f16", n_head=2, grid=2,
                    cls_token_num=121)

    def test_grouped_query_wqkv_gives_n_kv_head(self):
        cfg = GPTConfig(dim=128, n_layer=1, n_head=4, vocab_size=32, num_classes=3, grid_size=2)
        sd = GPT(cfg).state_dict()
        sd["layers.0.attention.wqkv.weight"] = torch.zeros((4 + 2 * 2) * 32, 128)  # n_kv_head 2
        torch.save({"model": sd}, self.path("gqa.pt"))
        meta = convert(self.path("gqa.pt"), self.path("gqa.safetensors"), "gpt", "f16", n_head=4, grid=2)
        self.assertEqual((meta["n_head"], meta["n_kv_head"]), (4, 2))

    def test_vq_checkpoint_drops_training_state(self):
        cfg = VQConfig(ch=32, ch_mult=[1, 2], z_channels=32, codebook_size=16, codebook_embed_dim=4,
                       in_channels=3, out_channels=3)
        sd = VQModel(cfg).state_dict()
        sd["quantize.codebook_used"] = torch.zeros(65536)
        torch.save({"model": sd, "discriminator": {"w": torch.zeros(1)}}, self.path("vq.pt"))
        meta = convert(self.path("vq.pt"), self.path("vq.safetensors"), "vq", "f32")
        self.assertEqual(meta["ch_mult"], "1,2")
        self.assertEqual((meta["ch"], meta["z_channels"], meta["codebook_size"]), (32, 32, 16))
        self.assertEqual(meta["num_res_blocks"], 2)
        t, _ = load_file(self.path("vq.safetensors"))
        self.assertNotIn("quantize.codebook_used", t)

    def test_not_a_checkpoint_is_a_clear_error(self):
        torch.save({"model": {"foo.weight": torch.zeros(2)}}, self.path("bad.pt"))
        with self.assertRaisesRegex(ValueError, "tok_embeddings.weight"):
            convert(self.path("bad.pt"), self.path("bad.safetensors"), "gpt", "f16")


if __name__ == "__main__":
    unittest.main()
