"""What tools/train_flashar.py needs to know of its base model's condition: a class (LlamaGen
c2i, `fmnist_gpt16`) or a Janus-Pro prompt (`fmnist_janus`). Each kind loads the base (frozen:
the teacher), makes the untrained FlashAR of it, draws training conditions with CFG dropout,
gives held-out conditions for evaluation, runs the teacher raster-causally and samples from it
raster (the baseline), and names its parts for the model card.

A condition is (cond, emb_mask): class ids [B] and None, or left-padded prompt ids [B, P] and
their mask [B, P] (0 on the padding).
"""
import os

import torch

import convert_janus as cj
import train_bpe
import train_janus as tj
from flashar_janus import JanusFlashAR, save_janus_flashar
from flashar_model import FlashAR, save_flashar
from ssd_distill_set import load_frozen_base


class ClassConditions:
    """LlamaGen c2i: the class token; CFG's null class."""
    family = "llamagen-c2i"
    card = dict(backbone="LlamaGen c2i backbone", raster_how="batches of 100", corner="the class token",
                prefix="the class token",
                positions="1 + r*W + c with the backbone's 2D RoPE of their grid cell",
                vertical_head="its own RMSNorm + output", head_copy="final norm/output", train_conditions="",
                null="the null class", eval_conditions="", sample_conditions="",
                vertical_names="`vertical.output.weight` F16 [vocab, dim]")

    def __init__(self, assets_dir, name):
        self.base, self.meta = load_frozen_base(assets_dir, name)

    def make_flashar(self, vertical_layers, gate_norm="joint"):
        return FlashAR.from_gpt(self.base, vertical_layers, gate_norm=gate_norm)

    def train(self, lab, g, drop_p):
        drop = torch.rand(len(lab), generator=g) < drop_p
        return torch.where(drop, torch.full_like(lab, self.base.cfg.num_classes), lab), None

    def eval(self, lab, offset=0):
        return lab, None

    def teacher_logits(self, cond, mask, tok):
        return self.base(tok, cond)[0]

    def raster_tokens(self, labels, samp, g, offset=0):
        return self.base.generate(labels, cfg_scale=samp["cfg_scale"], temperature=samp["temperature"],
                                  top_k=samp["top_k"], top_p=samp["top_p"], generator=g)

    def save(self, model, path, extra):
        extra = dict(extra, tokenizer="fmnist_vq", image_size=str(2 * model.cfg.grid_size))
        return save_flashar(model, path, extra)


class PromptConditions:
    """Janus-Pro: the generation prompt around a caption (train_janus.py's), left-padded to the
    file's prompt positions; CFG's row is Janus's unconditional prompt. Training captions are a
    random one of the image's class (train_janus.train_captions); evaluation uses the held-out
    paraphrases (train_janus.test_captions), as fmnist_janus's card measures."""
    family = "janus-pro"
    card = dict(backbone="prompt-conditioned Janus-Pro backbone", raster_how="one image at a time (JanusGen.generate)",
                corner="the last prompt position (`<begin_of_image>`)",
                prefix="the prompt (left-padded; padding hidden from every query but itself)",
                positions="P + r*W + c (P prompt positions) with the backbone's 1D RoPE",
                vertical_head="its own RMSNorm + a gen_head MLP (Linear, GELU, Linear)",
                head_copy="final norm and gen_head",
                train_conditions=(", each with Janus-Pro's prompt around a random training caption of its "
                                  "class (train_janus.train_captions)"),
                null="Janus's unconditional prompt", eval_conditions="; held-out prompts, train_janus.test_captions",
                sample_conditions=" from the class's held-out prompts",
                vertical_names=("`vertical.gen_head.{output_mlp_projector,vision_head}.weight` F16, "
                                "`.bias` F32 (the backbone gen_head's shapes)"))

    def __init__(self, assets_dir, name):
        self.path = os.path.join(assets_dir, name + ".safetensors")
        self.base, self.meta = cj.load_converted(self.path)
        self.base.requires_grad_(False)
        self.tokenizer_file = os.path.join(assets_dir, self.meta["tokenizer"])
        self.prompts = tj.Prompts(train_bpe.ByteBPE.from_file(self.tokenizer_file), int(self.meta["cls_token_num"]))

    def make_flashar(self, vertical_layers, gate_norm="joint"):
        return JanusFlashAR.from_gpt(self.base, vertical_layers, gate_norm=gate_norm,
                                     prompt_tokens=self.prompts.L, pad_id=self.prompts.pad_id)

    def train(self, lab, g, drop_p):
        return self.prompts.for_captions(*tj.train_captions(lab, g, drop_p))

    def eval(self, lab, offset=0):
        return self.prompts.for_captions(tj.test_captions(lab, offset))

    def teacher_logits(self, cond, mask, tok):
        return self.base.forward_train(cond, mask, tok)

    def raster_tokens(self, labels, samp, g, offset=0):
        return torch.stack([self.base.generate(self.prompts.ids(c), cfg=samp["cfg_scale"],
                                               temperature=samp["temperature"], top_k=samp["top_k"],
                                               top_p=samp["top_p"], pad_id=self.prompts.pad_id, generator=g)[0]
                            for c in tj.test_captions(labels, offset)])

    def save(self, model, path, extra):
        """The file, and the tokenizer it names beside it (the engine reads the two together)."""
        beside = os.path.join(os.path.dirname(os.path.abspath(path)), self.meta["tokenizer"])
        if not os.path.exists(beside):
            import shutil
            shutil.copyfile(self.tokenizer_file, beside)
        return save_janus_flashar(model, path, self.meta, extra)


def conditions_for(assets_dir, name):
    """The condition kind of the base model assets_dir/name.safetensors (its family)."""
    from safetensors_io import read_header
    header, _ = read_header(os.path.join(assets_dir, name + ".safetensors"))
    family = header.get("__metadata__", {}).get("vkspec.family", "")
    return (PromptConditions if family == "janus-pro" else ClassConditions)(assets_dir, name)

