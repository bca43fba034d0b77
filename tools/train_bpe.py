"""A small byte-level BPE tokenizer of our own (GPT-2 style), written as a Hugging Face
`tokenizer.json`: the text tokenizer of the prompt-driven model (train_janus.py).

  /usr/bin/python3 tools/train_bpe.py [--vocab 512] [--out train_runs/janus/tokenizer.json]

Training: the corpus (tools/fmnist_captions.py: every caption, the same captions inside Janus's
prompt template, a little general English) is split by GPT-2's pre-tokenizer regex, each piece
mapped to GPT-2's byte-to-unicode alphabet; the most frequent adjacent pair is merged until the
vocabulary (256 byte symbols + merges + special tokens) reaches --vocab or no pair is left.

The file follows what Hugging Face `tokenizers` writes for a byte-level BPE, with Janus-Pro's
(DeepSeek's) special tokens and BOS template:
  normalizer     null
  pre_tokenizer  Sequence[Split(GPT-2 regex, Isolated), ByteLevel(add_prefix_space false,
                 use_regex false)]
  model          BPE (vocab, merges "a b"; no unk, no dropout, no byte_fallback: byte-level
                 covers every input)
  post_processor TemplateProcessing: single = BOS $A, pair = BOS $A BOS $B
  decoder        ByteLevel
  added_tokens   the special tokens below (also in model.vocab, same ids, after the merges)
`<|User|>` and `<|Assistant|>` are not special: they are plain text, BPE-tokenized.

`ByteBPE.from_file(path)` is a reference encoder/decoder of such a file following the HF
semantics (added tokens split out first, leftmost-longest; then pre-tokenizer; BPE by merge
rank; template), used by train_janus.py and by `--check`.
"""
import argparse
import collections
import json
import os
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fmnist_captions as caps  # noqa: E402
import janus_model as jm  # noqa: E402

# Janus-Pro's strings, from the one place that has them (janus_model.py: the released
# processor's tags, the DeepSeek SFT template)
BOS, EOS, PAD = jm.BOS_TOKEN, jm.EOS_TOKEN, jm.PAD_TOKEN
BOI, EOI = jm.IMAGE_START_TAG, jm.IMAGE_END_TAG
SPECIAL_TOKENS = [BOS, EOS, PAD, BOI, EOI]

GPT2_SPLIT_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def janus_prompt(caption):
    """Janus-Pro's generation prompt text around a caption (BOS comes from the template)."""
    return jm.sft_prompt(caption)


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


# Unicode White_Space (what Oniguruma's \s matches in Unicode mode)
_WS = set("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | \
    {chr(c) for c in range(0x2000, 0x200B)}


def _is_ws(ch):
    return ch in _WS


def _is_l(ch):
    return unicodedata.category(ch).startswith("L")


def _is_n(ch):
    return unicodedata.category(ch).startswith("N")


def _is_other(ch):
    return not (_is_ws(ch) or _is_l(ch) or _is_n(ch))


def gpt2_split(text):
    """The matches of GPT2_SPLIT_REGEX over text (Python's `re` has no \\p{..}; this scanner
    implements the alternation in order). With behaviour Isolated and GPT-2's pattern every
    character lands in a match, so the pieces concatenate to text."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        j = None
        if c == "'":
            for s in ("s", "t", "re", "ve", "m", "ll", "d"):
                if text.startswith(s, i + 1):
                    j = i + 1 + len(s)
                    break
        if j is None:
            for cls in (_is_l, _is_n, _is_other):  # ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
                if c == " " and i + 1 < n and cls(text[i + 1]):
                    j = i + 2
                elif cls(c):
                    j = i + 1
                else:
                    continue
                while j < n and cls(text[j]):
                    j += 1
                break
        if j is None:  # whitespace: \s+(?!\S) then \s+
            k = i
            while k < n and _is_ws(text[k]):
                k += 1
            j = k if (k == n or k - i == 1) else k - 1
        out.append(text[i:j])
        i = j
    return out


def split_added(text, added):
    """Splits text on the added tokens (leftmost, longest first, as HF's AddedVocabulary):
    [(piece, is_added)]."""
    out, buf, i = [], [], 0
    toks = sorted(added, key=len, reverse=True)
    while i < len(text):
        hit = next((t for t in toks if text.startswith(t, i)), None)
        if hit is None:
            buf.append(text[i])
            i += 1
            continue
        if buf:
            out.append(("".join(buf), False))
            buf = []
        out.append((hit, True))
        i += len(hit)
    if buf:
        out.append(("".join(buf), False))
    return out


def train(lines, vocab_size, specials=SPECIAL_TOKENS, min_frequency=1):
    """Byte-level BPE merges from lines -> (vocab dict token->id, merges [(a, b)])."""
    b2u = bytes_to_unicode()
    words = collections.Counter()
    for line in lines:
        for piece, is_added in split_added(line, specials):
            if is_added:
                continue
            for w in gpt2_split(piece):
                words[tuple(b2u[b] for b in w.encode("utf-8"))] += 1
    vocab = {ch: i for i, ch in enumerate(sorted(b2u.values()))}
    merges = []
    words = {w: c for w, c in words.items()}
    while len(vocab) + len(specials) < vocab_size:
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        # most frequent; ties broken by the pair itself so the result is deterministic
        (a, b), cnt = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if cnt < min_frequency:
            break
        merges.append((a, b))
        vocab[a + b] = len(vocab)
        new = {}
        for w, c in words.items():
            if len(w) < 2:
                new[w] = new.get(w, 0) + c
                continue
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            t = tuple(out)
            new[t] = new.get(t, 0) + c
        words = new
    for s in specials:
        vocab[s] = len(vocab)
    return vocab, merges


def tokenizer_json(vocab, merges, specials=SPECIAL_TOKENS, bos=BOS):
    added = [{"id": vocab[s], "content": s, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for s in specials]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": GPT2_SPLIT_REGEX}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [vocab[bos]], "tokens": [bos]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


class ByteBPE:
    """Encoder/decoder of a byte-level BPE tokenizer.json of the shape tokenizer_json() writes,
    with HF tokenizers' semantics. Refuses files of another shape rather than guess."""

    def __init__(self, spec):
        m = spec["model"]
        assert m["type"] == "BPE" and spec.get("normalizer") is None, "unsupported tokenizer.json"
        pre = spec["pre_tokenizer"]["pretokenizers"]
        assert pre[0]["type"] == "Split" and pre[0]["pattern"]["Regex"] == GPT2_SPLIT_REGEX
        assert pre[0]["behavior"] == "Isolated" and pre[1]["type"] == "ByteLevel"
        assert not pre[1]["add_prefix_space"] and not pre[1]["use_regex"]
        self.vocab = dict(m["vocab"])
        merges = [tuple(x.split(" ")) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        self.ranks = {p: r for r, p in enumerate(merges)}
        self.added = {t["content"]: t["id"] for t in spec["added_tokens"]}
        self.special_ids = {t["id"] for t in spec["added_tokens"] if t["special"]}
        self.vocab.update(self.added)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        tp = spec["post_processor"]
        assert tp["type"] == "TemplateProcessing"
        self.prefix = []
        for item in tp["single"]:
            if "Sequence" in item:
                break
            self.prefix += tp["special_tokens"][item["SpecialToken"]["id"]]["ids"]
        self.b2u = bytes_to_unicode()
        self.u2b = {u: b for b, u in self.b2u.items()}
        self._cache = {}

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def token_id(self, content):
        return self.vocab[content]

    def __len__(self):
        return max(self.id_to_token) + 1

    def _bpe(self, word):
        if word in self._cache:
            return self._cache[word]
        syms = list(word)
        while len(syms) > 1:
            best = min(((self.ranks.get((a, b), 1 << 60), i)
                        for i, (a, b) in enumerate(zip(syms, syms[1:]))))
            if best[0] == 1 << 60:
                break
            a, b = syms[best[1]], syms[best[1] + 1]
            out, i = [], 0  # merge every occurrence of the pair, left to right
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            syms = out
        ids = [self.vocab[s] for s in syms]
        self._cache[word] = ids
        return ids

    def encode(self, text, add_special_tokens=True):
        ids = list(self.prefix) if add_special_tokens else []
        for piece, is_added in split_added(text, self.added):
            if is_added:
                ids.append(self.added[piece])
                continue
            for w in gpt2_split(piece):
                ids += self._bpe("".join(self.b2u[b] for b in w.encode("utf-8")))
        return ids

    def tokens(self, ids):
        return [self.id_to_token[i] for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        out, buf = [], []
        for i in ids:
            t = self.id_to_token[i]
            if t in self.added:
                if buf:
                    out.append(bytes(buf).decode("utf-8", errors="replace"))
                    buf = []
                if not (skip_special_tokens and i in self.special_ids):
                    out.append(t)
                continue
            buf += [self.u2b[u] for u in t]
        if buf:
            out.append(bytes(buf).decode("utf-8", errors="replace"))
        return "".join(out)


def training_lines():
    """The corpus: captions plain and inside the prompt template (weighted like training sees
    them), plus general English."""
    lines = caps.corpus()
    prompts = [janus_prompt(c) for c, _ in caps.train_pairs() + caps.test_pairs()]
    return lines + prompts


CHECK_TEXTS = ["ankle boot", "an ankle boot", "A Short Leather Boot", "a pair of trousers",
               "T-shirt/top", "a woollen pullover", "Zebra-striped pyjamas, 42 of them!",
               "naïve café ☕ 日本語", "  two  spaces\n\nand tabs\tend ", "it's", "",
               janus_prompt("ankle boot"), BOS + "x" + EOS + PAD + BOI + EOI]


def check(tok, out=print):
    """Round trips and a few invariants; returns the example tokenizations as text lines."""
    lines = []
    for t in CHECK_TEXTS:
        assert "".join(gpt2_split(t)) == t
        ids = tok.encode(t)
        assert ids[:len(tok.prefix)] == tok.prefix
        back = tok.decode(ids[len(tok.prefix):])
        assert back == t, (t, back)
        lines.append(f"{t!r} -> {ids} {tok.tokens(ids)}")
    # the splitter against hand-worked GPT-2 examples
    assert gpt2_split("Hello world") == ["Hello", " world"]
    assert gpt2_split("a  b") == ["a", " ", " b"]
    assert gpt2_split("x\n\n<y") == ["x", "\n", "\n", "<", "y"]
    assert gpt2_split("it's 42!? ") == ["it", "'s", " 42", "!?", " "]
    assert gpt2_split("<|User|>: hi") == ["<|", "User", "|>:", " hi"]
    for ln in lines:
        out(ln)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=512,
                    help="target size: 256 bytes + merges + special tokens")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "train_runs", "janus", "tokenizer.json"))
    ap.add_argument("--check", default=None, help="only check an existing tokenizer.json")
    args = ap.parse_args()
    if args.check:
        tok = ByteBPE.from_file(args.check)
        check(tok)
        print(f"{args.check}: {len(tok)} tokens, OK")
        return
    vocab, merges = train(training_lines(), args.vocab)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False, indent=1)
    os.replace(tmp, args.out)
    tok = ByteBPE.from_file(args.out)
    check(tok)
    print(f"wrote {args.out}: {len(vocab)} tokens ({len(merges)} merges, "
          f"{len(SPECIAL_TOKENS)} special)")


if __name__ == "__main__":
    main()
