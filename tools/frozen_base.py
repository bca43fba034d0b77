"""The frozen target that draft heads train on, whatever its model family.

A base gives, for a batch of token grids and their classes, the base's logits and its final normed
hidden states at the positions that predict each image token (index n: the state whose logits
predict token n), and the image head that maps such states to logits (LlamaGen: the `output`
matrix; Janus-Pro: `gen_head`). Heads trained through it run on the engine's family of the same
name (Gpt::project applies the family's head there).

  load_base(assets_dir, name)  -> LlamaGenBase or JanusBase, from assets_dir/name.safetensors
"""
import os

import torch

from safetensors_io import read_header
from ssd_distill_set import load_frozen_base


class LlamaGenBase:
    """A class-to-image LlamaGen GPT; the condition is the class (the null class when dropped)."""

    def __init__(self, model, meta):
        self.model, self.meta = model, meta
        self.dim, self.grid, self.vocab = model.cfg.dim, model.cfg.grid_size, model.cfg.vocab_size
        self.family = "llamagen"  # metadata base_family: the engine's check of what the heads fit

    def output(self, h):
        return self.model.output(h)

    @torch.no_grad()
    def states(self, tok, lab, drop_p=0.0, split="train", offset=0):
        if drop_p > 0:
            drop = torch.rand(lab.shape[0]) < drop_p
            lab = torch.where(drop, torch.full_like(lab, self.model.cfg.num_classes), lab)
        return self.model(tok, lab)


class JanusBase:
    """A Janus-Pro file (tools/convert_janus.py's) with its tokenizer: the condition is Janus's
    prompt around a caption of the image's class (fmnist_captions: a random training caption, or a
    held-out one for split "test"), left-padded to the file's prompt positions; dropped, it is
    Janus's unconditional row (all but the first and last token made pad), as train_janus.py
    trained the model."""

    def __init__(self, path):
        import convert_janus
        import train_bpe
        import train_janus
        self.model, self.meta = convert_janus.load_converted(path)
        self.model.requires_grad_(False)
        cfg = self.model.cfg
        self.dim, self.grid, self.vocab = cfg.dim, cfg.grid, cfg.image_vocab
        self.family = "janus-pro"
        tok_path = os.path.join(os.path.dirname(path), self.meta["tokenizer"])
        self.prompts = train_janus.Prompts(train_bpe.ByteBPE.from_file(tok_path), int(self.meta["cls_token_num"]))
        self._tj = train_janus
        self._rng = torch.Generator().manual_seed(0)

    def output(self, h):
        return self.model.gen_head(h)

    @torch.no_grad()
    def states(self, tok, lab, drop_p=0.0, split="train", offset=0):
        if split == "train":
            captions, drop = self._tj.train_captions(lab, self._rng, drop_p)
        else:
            captions, drop = self._tj.test_captions(lab, offset), None
        prefix, mask = self.prompts.for_captions(captions, drop)
        return self.model.forward_train(prefix, mask, tok, return_hidden=True)


def load_base(assets_dir, name):
    path = os.path.join(assets_dir, name + ".safetensors")
    header, _ = read_header(path)
    if (header.get("__metadata__") or {}).get("vkspec.family") == "janus-pro":
        return JanusBase(path)
    model, meta = load_frozen_base(assets_dir, name)
    return LlamaGenBase(model, meta)
