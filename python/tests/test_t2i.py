"""Captions for a text-to-image model: a small random LlamaGen t2i checkpoint (tools/reference.py
make-t2i, converted by tools/convert_llamagen.py, as CTest cli.generate_t2i makes it) generates
from a caption given as an array or a file, with the CLI's tokens; classes and captions exclude
each other. Skipped without PyTorch, which makes the checkpoint."""
import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

import vkspec
from conftest import ROOT, VALIDATION_WORDS

if importlib.util.find_spec("torch") is None:
    pytest.skip("PyTorch makes the checkpoint (apt-get install python3-torch)", allow_module_level=True)
TOOLS = ROOT / "tools"


def run(args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert not any(w in r.stderr for w in VALIDATION_WORDS), r.stderr
    return r


@pytest.fixture(scope="module")
def t2i(tmp_path_factory):
    d = tmp_path_factory.mktemp("t2i")
    pt, model, caption = d / "t2i.pt", d / "t2i.safetensors", d / "caption.npy"
    run([sys.executable, TOOLS / "reference.py", "make-t2i", pt, "--dim", "64", "--layers", "1", "--heads", "2",
         "--vocab", "1024", "--grid", "4", "--cls", "8", "--caption-dim", "16", "--seed", "0"])
    run([sys.executable, TOOLS / "convert_llamagen.py", pt, model, "--kind", "gpt", "--dtype", "f32", "--n-head", "2",
         "--grid", "4", "--cls-token-num", "8"])
    run([sys.executable, TOOLS / "reference.py", "make-caption", caption, "--tokens", "5", "--dim", "16"])
    return model, caption


def test_captions_give_the_clis_tokens(t2i, cli, tmp_path):
    model, caption = t2i
    s = vkspec.Session(model=model)
    r = s.generate("scd-mc", images=2, seed=5, captions=np.load(caption), cfg=2, top_k=50, window=8)
    assert r["tokens"].shape == (2, 16) and [st["class"] for st in r["stats"]] == [-1, -1]
    trace = tmp_path / "t.json"
    run([cli, "generate", "--method", "scd-mc", "--model", model, "--caption-embeddings", caption, "--images", "2",
         "--seed", "5", "--cfg", "2", "--top-k", "50", "--window", "8", "--trace", trace, "--out", tmp_path / "t.png"])
    cli_tokens = [np.asarray(im["tokens"]).reshape(-1).tolist() for im in json.loads(trace.read_text())["images"]]
    assert r["tokens"].tolist() == cli_tokens
    last = list(s.steps("ar", seed=5, captions=caption, cfg=2, top_k=50))[-1]
    assert np.array_equal(last["grid"].reshape(-1), s.generate("ar", seed=5, captions=caption, cfg=2, top_k=50)["tokens"][0])
    with pytest.raises(vkspec.Error, match="exclude each other"):
        s.generate("ar", captions=caption, classes=1)
    with pytest.raises(vkspec.Error, match="takes captions"):
        s.generate("ar")
    assert s.validation_messages() == []


def test_a_prompt_on_a_t2i_model_naming_its_t5_gives_the_clis_tokens(t2i, cli, tmp_path):
    """The T5 encoder on the engine (make-t5 and make-spiece, tools/convert_t5.py): prompt=TEXT."""
    model, _ = t2i
    d = model.parent
    hf = d / "t5_hf"
    if not (d / "t5.safetensors").exists():
        run([sys.executable, TOOLS / "reference.py", "make-t5", hf, "--d-model", "16", "--layers", "1", "--heads", "2",
             "--d-kv", "8", "--d-ff", "24", "--vocab", "96"])
        run([sys.executable, TOOLS / "reference.py", "make-spiece", hf])
        run([sys.executable, TOOLS / "convert_t5.py", hf, d / "t5"])
    run([sys.executable, TOOLS / "reference.py", "make-t2i", d / "p.pt", "--dim", "64", "--layers", "1", "--heads", "2",
         "--vocab", "1024", "--grid", "4", "--cls", "8", "--caption-dim", "16", "--seed", "0"])
    prompted = d / "t2i_prompt.safetensors"
    run([sys.executable, TOOLS / "convert_llamagen.py", d / "p.pt", prompted, "--kind", "gpt", "--dtype", "f32",
         "--n-head", "2", "--grid", "4", "--cls-token-num", "8", "--text-encoder", "t5.safetensors"])
    s = vkspec.Session(model=prompted)
    r = s.generate("ar", images=2, seed=3, prompt="A red fox", cfg=2, top_k=50)
    trace = tmp_path / "p.json"
    run([cli, "generate", "--model", prompted, "--prompt", "A red fox", "--images", "2", "--seed", "3", "--cfg", "2",
         "--top-k", "50", "--trace", trace, "--out", tmp_path / "p.png"])
    cli_tokens = [np.asarray(im["tokens"]).reshape(-1).tolist() for im in json.loads(trace.read_text())["images"]]
    assert r["tokens"].tolist() == cli_tokens
    assert s.validation_messages() == []
