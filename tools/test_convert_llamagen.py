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

    def released_flashar(self, cfg, gate, args):
        """A FlashAR of ours on a random GPT, its weights saved under LlamaGen-FlashAR's names
        (vertical blocks after the backbone's in `layers`, medusa_*, hv_gate_mlp.* or hv_mix_logit)."""
        from flashar_model import ConstantGate, FlashAR
        torch.manual_seed(3)
        ours = FlashAR.from_gpt(GPT(cfg), vertical_layers=1, vertical_start=cfg.n_layer - 1)
        sd = dict(ours.base.state_dict())
        for k, v in ours.vertical.layers[0].state_dict().items():
            sd[f"layers.{cfg.n_layer}.{k}"] = v
        sd.update({"medusa_norm.weight": ours.vertical.norm.weight, "medusa_output.weight": ours.vertical.output.weight,
                   "freqs_cis": torch.zeros(4, 2)})
        if gate == "mlp":
            with torch.no_grad():
                ours.gate.fc2.weight.normal_()
            sd.update({"hv_gate_mlp.0.weight": ours.gate.fc1.weight, "hv_gate_mlp.2.weight": ours.gate.fc2.weight,
                       "hv_gate_mlp.2.bias": ours.gate.fc2.bias})
        else:
            ours.gate, ours.gate_kind = ConstantGate(0.0), "constant"
        ckpt = {"model": sd, "steps": 5}
        if args is not None:
            ckpt["args"] = args
        torch.save(ckpt, self.path("flashar.pt"))
        return ours

    def check_same_model(self, ours, path, cfg):
        from flashar_model import load_flashar
        got, meta = load_flashar(path)
        self.assertEqual((got.vertical_start, got.n_vertical, got.gate_kind), (ours.vertical_start, 1, ours.gate_kind))
        tokens = torch.randint(0, cfg.vocab_size, (2, cfg.grid_size ** 2))
        cond = torch.tensor([1, cfg.num_classes])
        with torch.no_grad():
            self.assertTrue(torch.allclose(got.fused_logits(tokens, cond), ours.eval().fused_logits(tokens, cond),
                                           atol=1e-5))
        return meta

    def test_flashar_c2i_checkpoint_with_its_args(self):
        import argparse
        cfg = GPTConfig(dim=64, n_layer=3, n_head=2, vocab_size=48, num_classes=3, grid_size=3)
        args = argparse.Namespace(medusa_attention_num=1, vertical_start_layer=-1,
                                  vertical_start_last_minus_depth=True, hv_gate=True)
        ours = self.released_flashar(cfg, "mlp", args)
        meta = convert(self.path("flashar.pt"), self.path("flashar.safetensors"), "flashar", "f32", n_head=2, grid=3)
        self.assertEqual((meta["n_layer"], meta["flashar.vertical_start_layer"], meta["flashar.gate_norm"]),
                         (3, 2, "joint"))
        self.check_same_model(ours, self.path("flashar.safetensors"), cfg)

    def test_flashar_without_args_or_gate_is_the_t2i_scripts_default(self):
        cfg = GPTConfig(dim=64, n_layer=2, n_head=2, vocab_size=48, num_classes=3, grid_size=3)
        ours = self.released_flashar(cfg, "constant", None)
        ours.vertical_start = cfg.n_layer  # the code's default start: after the last block
        meta = convert(self.path("flashar.pt"), self.path("flashar.safetensors"), "flashar", "f32", n_head=2, grid=3)
        self.assertEqual((meta["flashar.vertical_start_layer"], meta["flashar.gate"]), (2, "constant"))
        t, _ = load_file(self.path("flashar.safetensors"))
        self.assertNotIn("layers.2.attention.wqkv.weight", t)
        self.check_same_model(ours, self.path("flashar.safetensors"), cfg)
        with self.assertRaisesRegex(ValueError, "cannot hold 5 vertical"):
            convert(self.path("flashar.pt"), self.path("x.safetensors"), "flashar", "f32", n_head=2, grid=3,
                    vertical_layers=5)
        torch.save({"model": GPT(cfg).state_dict()}, self.path("plain.pt"))
        with self.assertRaisesRegex(ValueError, "medusa_norm"):
            convert(self.path("plain.pt"), self.path("x.safetensors"), "flashar", "f32", n_head=2, grid=3)


if __name__ == "__main__":
    unittest.main()
