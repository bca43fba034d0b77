"""Prompts for a prompt-driven model: a small random Janus-Pro checkpoint folder in the released
layout (tools/reference.py make-janus, converted by tools/convert_janus.py, as CTest
cli.generate_janus makes it) generates from `prompt=` with the CLI's tokens, step by step too;
prompts and classes exclude each other, and an empty prompt or none is refused with the reason.
Skipped without PyTorch, which makes the checkpoint."""
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
def janus(tmp_path_factory):
    d = tmp_path_factory.mktemp("janus")
    run([sys.executable, TOOLS / "reference.py", "make-janus", d / "hf", "--dim", "64", "--layers", "2", "--heads",
         "4", "--image-vocab", "64", "--grid", "4", "--vq"])
    run([sys.executable, TOOLS / "convert_janus.py", d / "hf", d / "janus", "--dtype", "f32", "--prompt-tokens", "24"])
    return d / "janus.safetensors"


def test_prompts_give_the_clis_tokens(janus, cli, tmp_path):
    s = vkspec.Session(model=janus)
    r = s.generate("scd-mc", images=2, seed=5, prompt="a red ankle boot", window=8)
    assert r["tokens"].shape == (2, 16) and [st["class"] for st in r["stats"]] == [-1, -1]
    trace = tmp_path / "t.json"
    run([cli, "generate", "--method", "scd-mc", "--model", janus, "--prompt", "a red ankle boot", "--images", "2",
         "--seed", "5", "--window", "8", "--trace", trace, "--out", tmp_path / "t.png"])
    cli_tokens = [np.asarray(im["tokens"]).reshape(-1).tolist() for im in json.loads(trace.read_text())["images"]]
    assert r["tokens"].tolist() == cli_tokens
    last = list(s.steps("ar", seed=5, prompt="a red ankle boot"))[-1]
    assert np.array_equal(last["grid"].reshape(-1), s.generate("ar", seed=5, prompt="a red ankle boot")["tokens"][0])
    with pytest.raises(vkspec.Error, match="exclude each other"):
        s.generate("ar", prompt="a boot", classes=1)
    with pytest.raises(vkspec.Error, match="prompt is empty"):
        s.generate("ar", prompt="  ")
    with pytest.raises(vkspec.Error, match="takes a prompt"):
        s.generate("ar")
    assert s.validation_messages() == []
