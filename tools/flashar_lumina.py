"""FlashAR on Lumina-mGPT (our variant; issue #48): tools/flashar_model.py's `FlashAR` with a
`lumina_model.LuminaGen` backbone, as the engine's `--method flashar` runs it on the
`lumina-mgpt` family.

No recipe exists for Lumina-mGPT (the papers' FlashAR code post-trains LlamaGen and Emu3.5). What
carries over: the diagonal mask, the fusion rules, the gate. What is Lumina's own:
  * the condition is the prompt's ids (BOS, the template's text, separator, image start, the two
    size tokens), right-aligned in P positions (padding hidden from every query but itself); the
    corner is predicted at the last of them (the width token); the CFG row is the same ids with
    all but the image start and size tokens hidden (the engine's own mask);
  * the sequence is the released one: a line break (token 8803) after every grid row but the
    last, so cell (r, c) sits at P + r (W + 1) + c and row r's break at P + r (W + 1) + W; RoPE
    is 1D over those positions;
  * the break belongs to its row end's diagonal r + W - 1 and is fed in the same forward, right
    after it: every query that sees the row end but the row end itself also sees the break (the
    engine's placed query, engine/model/line_breaks.h), and the break's state stands for the row
    end's: V of target (r + 1, W - 1) is read at row r's break;
  * the heads are over the image codes only: H = lm_head's image rows after the final norm, V a
    copy of them after the branch's own norm (`vertical.output.weight`, the family's head name).

File: a converted Lumina-mGPT file (tools/convert_lumina.py's names and metadata) plus
`vertical.layers.{i}.*` (a converted layer's names, q/k norms included), `vertical.norm.weight`,
`vertical.output.weight` [codes, dim] and the gate.

No Lumina-mGPT model small enough to post-train here exists (the released ones are 7B and 34B),
so this module has no trainer; `decode_teacher_forced` is the reference the engine is checked
against on random files.
"""
import torch
import torch.nn as nn

import convert_lumina as cl
import lumina_model as lm
from convert_janus import cast
from flashar_model import FlashAR, FlashArShape, flashar_keys, fuse_sources
from janus_model import rope_cos_sin
from safetensors_io import load_file, save_file
from vkspec_models import RMSNorm

LAYOUT_TOKENS = 3  # image start, height, width: what the unconditional row keeps


def break_layout(W, P):
    """Sequence positions of the W x W cells [N] and of the breaks after rows 0..W-2 [W-1], the
    sequence length, and each position's diagonal (prefix: -1)."""
    n = torch.arange(W * W)
    cell_pos = P + (n // W) * (W + 1) + n % W
    break_pos = P + torch.arange(W - 1) * (W + 1) + W
    S = P + W * W + W - 1
    diag = torch.full((S,), -1, dtype=torch.long)
    diag[cell_pos] = n // W + n % W
    diag[break_pos] = torch.arange(W - 1) + W - 1
    return cell_pos, break_pos, S, diag


def break_mask(W, P):
    """bool [S, S] (True = attend): the prefix causal, every image query sees the prefix and every
    position on its own or an earlier diagonal, but a row end not its own break."""
    cell_pos, break_pos, S, diag = break_layout(W, P)
    m = torch.zeros(S, S, dtype=torch.bool)
    m[:P, :P] = torch.ones(P, P, dtype=torch.bool).tril()
    m[P:, :P] = True
    m[P:, P:] = diag[None, P:] <= diag[P:, None]
    row_ends = cell_pos.view(W, W)[:-1, -1]
    m[row_ends, break_pos] = False
    return m


def break_sources(W, P):
    """fuse_sources for the break layout: H from the left neighbour's position, V from the upper
    one's, or from the break after row r - 1 when the upper one is its row end."""
    cell_pos, break_pos, _, _ = break_layout(W, P)
    n = torch.arange(W * W)
    r, c = n // W, n % W
    upper = torch.where(c == W - 1, break_pos[(r - 1).clamp(min=0, max=W - 2)], cell_pos[(n - W).clamp(min=0)])
    return fuse_sources(W, P, cell_pos, upper)


class LuminaVerticalBranch(nn.Module):
    def __init__(self, lcfg: lm.LuminaConfig, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([lm.ChameleonDecoderLayer(lcfg) for _ in range(n_layers)])
        self.norm = RMSNorm(lcfg.dim, lcfg.norm_eps)
        self.output = nn.Linear(lcfg.dim, lcfg.image_codes, bias=False)


class LuminaFlashAR(FlashAR):
    """FlashAR on a LuminaGen backbone. labels: condition ids [B, P] right-aligned (emb_mask
    [B, P], 0 on the padding); tokens: VQ codes [B, N]. Decoded by decode_teacher_forced
    (flashar_model.generate_diagonal's KV-cache steps do not place the breaks)."""
    kv_decoding = False

    def __init__(self, base: lm.LuminaGen, vertical_layers=1, vertical_start=None, gate_hidden=None, gate="mlp",
                 gate_norm="joint", prompt_tokens=None, grid=None):
        lc = base.cfg
        W = grid
        shape = FlashArShape(W, prompt_tokens, lc.image_codes, lc.n_layer, lc.dim, "lumina-mgpt")
        super().__init__(base, vertical_layers, vertical_start, gate_hidden, gate, gate_norm, shape=shape)

    def layout(self, grid, prefix):
        return break_mask(grid, prefix), break_sources(grid, prefix)

    def make_vertical(self, n_layers):
        return LuminaVerticalBranch(self.base.cfg, n_layers)

    def layers(self):
        return self.base.model.layers

    def image_rows(self):
        return self.base.lm_head.weight[lm.IMAGE_FIRST:lm.IMAGE_FIRST + self.base.cfg.image_codes]

    def copy_head_into_vertical(self):
        self.vertical.norm.load_state_dict(self.base.model.norm.state_dict())
        self.vertical.output.weight.copy_(self.image_rows())

    def rope(self, pos):
        return rope_cos_sin(pos, self.base.cfg.head_dim, self.base.cfg.rope_theta)

    def h_head(self, x):
        return (self.base.model.norm(x) @ self.image_rows().t()).float()

    def v_head(self, v):
        return self.vertical.output(self.vertical.norm(v)).float()

    def embed(self, tokens, labels):
        """The prefix's ids, then the cells' BPE ids with a break after every row but the last."""
        ids = [labels]
        if tokens is not None and tokens.shape[1] > 0:
            W = self.cfg.grid_size
            rows = lm.bpe_of_code(tokens).view(tokens.shape[0], -1, W)
            brk = torch.full((tokens.shape[0], rows.shape[1], 1), lm.LINE_BREAK, dtype=tokens.dtype)
            ids.append(torch.cat([rows, brk], dim=2).flatten(1)[:, :self.mask.shape[0] - self.cfg.cls_token_num])
        return self.base.model.embed_tokens(torch.cat(ids, dim=1))

    def null_condition(self, labels):
        return labels

    def null_emb_mask(self, emb_mask):
        m = torch.zeros_like(emb_mask)
        m[:, -LAYOUT_TOKENS:] = 1
        return m


@torch.no_grad()
def decode_teacher_forced(model: FlashAR, labels, emb_mask, cfg_scale=1.0):
    """Greedy anti-diagonal decoding by full teacher-forced forwards (the diagonal mask makes the
    placeholders of undecided cells invisible to every target of the next diagonal): tokens [B, N]
    and the guided logits of every target [B, N, vocab]. The reference for any FlashAR; quadratic
    in the steps, for tiny models."""
    W, N = model.cfg.grid_size, model.cfg.block_size
    B = labels.shape[0]
    null_mask = model.null_emb_mask(emb_mask) if hasattr(model, "null_emb_mask") else emb_mask
    out = torch.zeros(B, N, dtype=torch.long)
    guided = torch.zeros(B, N, model.cfg.vocab_size)
    from flashar_model import diagonal_cells
    for d in range(2 * W - 1):
        c = model.fuse(*model(out, labels, emb_mask=emb_mask))[0]
        if cfg_scale != 1.0:
            u = model.fuse(*model(out, model.null_condition(labels), emb_mask=null_mask))[0]
            c = u + cfg_scale * (c - u)
        cells = torch.tensor([r * W + cc for r, cc in diagonal_cells(W, d)])
        guided[:, cells] = c[:, cells]
        out[:, cells] = c[:, cells].argmax(-1)
    return out, guided


# ----------------------------------------------------------------------------------------------
# file
# ----------------------------------------------------------------------------------------------
def vertical_entries(n_layers):
    """convert_lumina's entries of the branch's layers: ours under vertical.layers.{i}., the
    branch module's own names (layers.{i}.) as the sources."""
    out = {}
    for i in range(n_layers):
        out.update(cl.layer_plan(f"layers.{i}.", f"vertical.layers.{i}."))
    return out


def save_lumina_flashar(model: LuminaFlashAR, path, base_path, extra=None, dtype="f32"):
    """The engine's file: the converted base file's tensors and metadata (the backbone as
    convert_lumina wrote it; a branch made here leaves it unchanged), the branch converted as
    convert_lumina converts a layer, its head's image rows, the gate in f32."""
    tensors, meta = load_file(base_path)
    lc = model.base.cfg
    sd = model.vertical.state_dict()
    for name, (srcs, role) in vertical_entries(model.n_vertical).items():
        tensors[name] = cl.converted(role, {s: sd[s] for s in srcs}, srcs, lc, dtype, name).contiguous()
    tensors["vertical.norm.weight"] = sd["norm.weight"].float().contiguous()
    tensors["vertical.output.weight"] = cast(sd["output.weight"], "weight", dtype, "vertical.output.weight").contiguous()
    for k, t in model.gate.state_dict().items():
        tensors["gate." + k] = t.detach().float().contiguous()
    meta = {k: str(v) for k, v in meta.items() if not k.startswith("flashar.") and k != "role"}
    meta.update({k: str(v) for k, v in (extra or {}).items()})
    meta.update(flashar_keys(model))
    save_file(tensors, path, meta)
    return meta


def load_converted(path):
    """A converted Lumina-mGPT file -> (LuminaGen in f32, metadata): lm_head holds the image rows
    only (the rest zero: nothing else is ever sampled), the embedding table the whole text one."""
    sd, meta = load_file(path)
    i = lambda k: int(meta[k])
    cfg = lm.LuminaConfig(dim=i("dim"), n_layer=i("n_layer"), n_head=i("n_head"), n_kv_head=i("n_kv_head"),
                          ffn_hidden=i("ffn_hidden"), vocab=i("text_vocab_size"), rope_theta=float(meta["rope_base"]),
                          norm_eps=float(meta["norm_eps"]), qk_norm_groups=i("qk_norm_groups"),
                          swin_norm=bool(i("swin_norm")), image_codes=i("vocab_size"))
    model = lm.LuminaGen(cfg)
    head = torch.zeros(cfg.vocab, cfg.dim)
    head[lm.IMAGE_FIRST:lm.IMAGE_FIRST + cfg.image_codes] = sd["output.weight"].float()
    layers = {k: v for k, v in cl.plan(cfg).items() if k.startswith("layers.")}
    state = cl.unconverted_layers(sd, layers, cfg.n_head)
    state.update({"model.embed_tokens.weight": sd["text_embeddings.weight"].float(),
                  "model.norm.weight": sd["norm.weight"].float(), "lm_head.weight": head})
    model.load_state_dict(state, strict=True)
    return model.eval(), meta


def load_lumina_flashar(path):
    """-> (LuminaFlashAR in f32, eval mode, metadata) of a file save_lumina_flashar wrote."""
    sd, meta = load_file(path)
    base, _ = load_converted(path)
    gate = meta.get("flashar.gate", "mlp")
    m = LuminaFlashAR(base, int(meta["flashar.vertical_layers"]), int(meta["flashar.vertical_start_layer"]),
                      int(meta["flashar.gate_hidden"]) if gate == "mlp" else None, gate,
                      meta.get("flashar.gate_norm", "joint"), prompt_tokens=int(meta["cls_token_num"]),
                      grid=int(meta["grid_size"]))
    vert = cl.unconverted_layers(sd, vertical_entries(m.n_vertical), base.cfg.n_head)
    vert["norm.weight"] = sd["vertical.norm.weight"].float()
    vert["output.weight"] = sd["vertical.output.weight"].float()
    m.vertical.load_state_dict(vert, strict=True)
    m.gate.load_state_dict({k[len("gate."):]: v.float() for k, v in sd.items() if k.startswith("gate.")})
    return m.eval(), meta
