"""vkspec.generate gives the CLI's tokens for equal seeds, in the documented shapes and dtypes."""
import json
import subprocess

import numpy as np
import pytest

from conftest import MODEL, VALIDATION_WORDS


def cli_tokens(cli, tmp_path, method, args):
    trace = tmp_path / f"{method}.json"
    r = subprocess.run([cli, "generate", "--method", method, "--model", str(MODEL), "--trace", str(trace),
                        "--out", str(tmp_path / f"{method}.png")] + args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert not any(w in r.stderr for w in VALIDATION_WORDS), r.stderr
    images = json.loads(trace.read_text())["images"]
    return [(im["seed"], np.asarray(im["tokens"]).reshape(-1).tolist()) for im in images]


@pytest.mark.parametrize("method,options,cli_args", [
    ("ar", {}, []),
    ("scd-mc", {"window": 4}, ["--window", "4"]),
])
def test_tokens_equal_the_clis(session, cli, tmp_path, method, options, cli_args):
    r = session.generate(method, images=2, seed=7, **options)
    ours = [(s["seed"], t.tolist()) for s, t in zip(r["stats"], r["tokens"])]
    assert ours == cli_tokens(cli, tmp_path, method, ["--images", "2", "--seed", "7"] + cli_args)


def test_shapes_dtypes_and_stats(session):
    r = session.generate("sjd", seeds=[3, 11], classes=[1, 4], window=4)
    g = session.grid_size
    assert r["images"].dtype == np.uint8 and r["images"].ndim == 4 and r["images"].shape[0] == 2
    assert r["images"].shape[3] == 3
    assert r["tokens"].dtype == np.int32 and r["tokens"].shape == (2, g * g)
    assert [s["seed"] for s in r["stats"]] == [3, 11] and [s["class"] for s in r["stats"]] == [1, 4]
    for s in r["stats"]:
        assert 1 <= s["nfe"] <= g * g and s["wall_ms"] > 0
        assert s["accepted_length"] == pytest.approx(g * g / s["nfe"])
    assert r["options"] == {"window": "4"} and "cfg" in r["sampler"]


def test_batch_gives_batch_ones_tokens(session):
    one = session.generate("ar", images=3, seed=2)
    batched = session.generate("ar", images=3, seed=2, batch=3)
    assert np.array_equal(one["tokens"], batched["tokens"])
    assert np.array_equal(one["images"], batched["images"])


def test_module_functions_use_a_default_session():
    import vkspec
    names = [m["name"] for m in vkspec.methods()]
    assert "ar" in names and "scd-mc" in names
    scd = next(m for m in vkspec.methods() if m["name"] == "scd-mc")
    assert scd["lossless"] is True and scd["losslessness"] == "lossless"
    # A lossy default with a lossless choice says which, as `vkspec methods` does.
    zipar = next(m for m in vkspec.methods() if m["name"] == "zipar")
    assert zipar["lossless"] is False and "lossless with --verify exact" in zipar["losslessness"], zipar["losslessness"]
    assert scd["batches"] is True
    window = next(o for o in scd["options"] if o["name"] == "window")
    assert window["type"] == "integer" and window["min"] >= 1 and window["default"]
    devices = vkspec.devices()
    assert devices and all("name" in d for d in devices)
