"""Chameleon's VQGAN (the image tokenizer of Lumina-mGPT, issue 49) in PyTorch, in the released
layout: our reference for its decoder on the engine. Written from the released code
(facebookresearch/chameleon `chameleon/inference/vqgan.py`, Lumina-mGPT's copy in
`model/chameleon_vae_ori/`), which is taming-transformers' VQGAN:

  decode: codes [B, h, w] -> quantize.embedding rows (no normalisation) -> post_quant_conv (1x1)
          -> Decoder: conv_in, mid (ResnetBlock, AttnBlock, ResnetBlock), levels from the deepest
          (`up.{L-1}` .. `up.0`, each num_res_blocks + 1 ResnetBlocks, attention only at the
          resolutions listed in attn_resolutions: none in the released config, and a nearest x2
          upsample + 3x3 conv on every level but 0), GroupNorm(32, eps 1e-6) + swish, conv_out
  pixels: clamp to [-1, 1], (x + 1) / 2 * 255, truncated to uint8.
  encode: Encoder (the mirror, `down.{i}`, downsample = pad (0,1,0,1) + 3x3 stride-2 conv),
          quant_conv, nearest code by squared L2 distance.

The released files: `vqgan.yaml` (model.params.embed_dim, n_embed, ddconfig: z_channels,
resolution, in_channels, out_ch, ch, ch_mult, num_res_blocks, attn_resolutions, dropout) and
`vqgan.ckpt` (torch.save of {"state_dict": ...} with the module paths as keys).
`tools/convert_lumina.py --vqgan` renames these modules to the engine's VQ layout.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# taming's blocks, module and parameter names included, are LlamaGen's too
from vkspec_models import AttnBlock, Downsample, Normalize, ResnetBlock, Upsample  # noqa: E402


class Level(nn.Module):
    def __init__(self, blocks, attn, resample=None):
        super().__init__()
        self.block = nn.ModuleList(blocks)
        self.attn = nn.ModuleList(attn)
        if resample is not None:
            setattr(self, resample[0], resample[1])


class Mid(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block_1, self.attn_1, self.block_2 = ResnetBlock(c, c), AttnBlock(c), ResnetBlock(c, c)

    def forward(self, x):
        return self.block_2(self.attn_1(self.block_1(x)))


class Encoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        ch, mult, nres, L = d["ch"], d["ch_mult"], d["num_res_blocks"], len(d["ch_mult"])
        self.conv_in = nn.Conv2d(d["in_channels"], ch, 3, padding=1)
        res, cin, levels = d["resolution"], ch, []
        for i in range(L):
            cout = ch * mult[i]
            blocks = [ResnetBlock(cin if j == 0 else cout, cout) for j in range(nres)]
            attn = [AttnBlock(cout) for _ in range(nres)] if res in d["attn_resolutions"] else []
            levels.append(Level(blocks, attn, ("downsample", Downsample(cout)) if i != L - 1 else None))
            cin, res = cout, res // 2 if i != L - 1 else res
        self.down = nn.ModuleList(levels)
        self.mid = Mid(cin)
        self.norm_out, self.conv_out = Normalize(cin), nn.Conv2d(cin, d["z_channels"], 3, padding=1)

    def forward(self, x):
        h = self.conv_in(x)
        for i, lv in enumerate(self.down):
            for j, b in enumerate(lv.block):
                h = b(h)
                if len(lv.attn):
                    h = lv.attn[j](h)
            if hasattr(lv, "downsample"):
                h = lv.downsample(h)
        return self.conv_out(F.silu(self.norm_out(self.mid(h))))


class Decoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        ch, mult, nres, L = d["ch"], d["ch_mult"], d["num_res_blocks"], len(d["ch_mult"])
        cin = ch * mult[-1]
        res = d["resolution"] // 2 ** (L - 1)
        self.conv_in = nn.Conv2d(d["z_channels"], cin, 3, padding=1)
        self.mid = Mid(cin)
        levels = [None] * L
        for i in reversed(range(L)):
            cout = ch * mult[i]
            blocks = [ResnetBlock(cin if j == 0 else cout, cout) for j in range(nres + 1)]
            attn = [AttnBlock(cout) for _ in range(nres + 1)] if res in d["attn_resolutions"] else []
            levels[i] = Level(blocks, attn, ("upsample", Upsample(cout)) if i != 0 else None)
            cin, res = cout, res * 2 if i != 0 else res
        self.up = nn.ModuleList(levels)
        self.norm_out, self.conv_out = Normalize(cin), nn.Conv2d(cin, d["out_ch"], 3, padding=1)

    def forward(self, z):
        h = self.mid(self.conv_in(z))
        for lv in reversed(self.up):
            for j, b in enumerate(lv.block):
                h = b(h)
                if len(lv.attn):
                    h = lv.attn[j](h)
            if hasattr(lv, "upsample"):
                h = lv.upsample(h)
        return self.conv_out(F.silu(self.norm_out(h)))


class ChameleonVQGAN(nn.Module):
    def __init__(self, params):
        super().__init__()
        d = params["ddconfig"]
        self.params = params
        self.encoder, self.decoder = Encoder(d), Decoder(d)
        self.quantize = nn.Module()
        self.quantize.embedding = nn.Embedding(params["n_embed"], params["embed_dim"])
        self.quant_conv = nn.Conv2d(d["z_channels"], params["embed_dim"], 1)
        self.post_quant_conv = nn.Conv2d(params["embed_dim"], d["z_channels"], 1)

    @torch.no_grad()
    def decode_codes(self, codes):
        """codes [B, h, w] -> pixels [B, out_ch, 16 h, 16 w] in the decoder's range (about [-1, 1])."""
        z = self.quantize.embedding.weight[codes].permute(0, 3, 1, 2)
        return self.decoder(self.post_quant_conv(z))

    @torch.no_grad()
    def encode_codes(self, pixels):
        z = self.quant_conv(self.encoder(pixels)).permute(0, 2, 3, 1)
        e = self.quantize.embedding.weight
        d = (z ** 2).sum(-1, keepdim=True) - 2 * z @ e.t() + (e ** 2).sum(-1)
        return d.argmin(-1)


def to_uint8(pixels):
    """The released image_tokenizer's pixels: clamp, map to [0, 1], x255, truncate."""
    return ((pixels.clamp(-1, 1) + 1) / 2 * 255).to(torch.uint8)


def released_params(n_embed=8192, embed_dim=256, ch=128, ch_mult=(1, 1, 2, 2, 4), num_res_blocks=2,
                    z_channels=256, resolution=512, attn_resolutions=(), channels=3):
    return {"embed_dim": embed_dim, "n_embed": n_embed,
            "ddconfig": {"double_z": False, "z_channels": z_channels, "resolution": resolution,
                         "in_channels": channels, "out_ch": channels, "ch": ch, "ch_mult": list(ch_mult),
                         "num_res_blocks": num_res_blocks, "attn_resolutions": list(attn_resolutions),
                         "dropout": 0.0}}


def save_released(model, folder):
    """vqgan.yaml and vqgan.ckpt as Meta's download has them."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "vqgan.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump({"model": {"target": "chameleon.inference.vqgan.VQModel", "params": model.params}}, f)
    torch.save({"state_dict": model.state_dict()}, os.path.join(folder, "vqgan.ckpt"))


def load_released(folder):
    """A folder with vqgan.yaml and vqgan.ckpt -> ChameleonVQGAN (f32, eval). Training-only keys
    (`loss.*`) are ignored; every model tensor must be there."""
    with open(os.path.join(folder, "vqgan.yaml"), encoding="utf-8") as f:
        params = yaml.safe_load(f)["model"]["params"]
    params = {k: params[k] for k in ("embed_dim", "n_embed", "ddconfig")}
    model = ChameleonVQGAN(params)
    sd = torch.load(os.path.join(folder, "vqgan.ckpt"), map_location="cpu", weights_only=True)
    sd = sd.get("state_dict", sd)
    want = model.state_dict()
    missing = [k for k in want if k not in sd]
    if missing:
        raise ValueError(f"{folder}/vqgan.ckpt: missing tensors {', '.join(missing[:5])}")
    model.load_state_dict({k: sd[k].float() for k in want}, strict=True)
    return model.eval()


def random_tiny(seed=0, **kw):
    """A random small VQGAN of the released architecture (GroupNorm needs channels in 32s)."""
    torch.manual_seed(seed)
    p = released_params(**{"n_embed": 64, "embed_dim": 32, "ch": 32, "ch_mult": (1, 2), "num_res_blocks": 1,
                           "z_channels": 32, "resolution": 32, **kw})
    m = ChameleonVQGAN(p)
    with torch.no_grad():
        for name, t in m.named_parameters():
            is_gain = "norm" in name.rsplit(".", 2)[-2] and name.endswith("weight")  # GroupNorm gains
            t.normal_(1.0 if is_gain else 0.0, 0.1)
    return m.eval()
