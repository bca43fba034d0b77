"""vkspec.steps walks one image's decoding as the viewer draws it; vkspec.bench returns bench's JSON."""
import numpy as np

import vkspec
from conftest import MODEL, VALIDATION_WORDS


def test_steps_end_in_generates_image(session):
    g = session.grid_size
    steps = list(session.steps("scd-mc", seed=5, cls=2, window=4))
    assert steps[-1]["done"] and not any(s["done"] for s in steps[:-1])
    assert [s["step"] for s in steps] == list(range(len(steps)))
    last = steps[-1]
    assert last["grid"].shape == (g, g) and last["grid"].dtype == np.int32 and (last["grid"] >= 0).all()
    assert last["image"].dtype == np.uint8 and last["image"].ndim == 3 and last["image"].shape[2] == 3
    first = steps[0]
    assert (first["grid"] == -1).any() and first["committed"] == (first["grid"] != -1).sum()
    assert len(first["proposed"]) == len(first["proposed_tokens"])
    whole = session.generate("scd-mc", seeds=[5], classes=[2], window=4)
    assert np.array_equal(last["grid"].reshape(-1), whole["tokens"][0])
    assert np.array_equal(last["image"], whole["images"][0])
    assert last["nfe"] == whole["stats"][0]["nfe"] == len(steps)


def test_steps_without_images(session):
    it = session.steps("ar", seed=1, images=False)
    step = next(it)
    assert "image" not in step and step["committed"] == 1


def test_bench_returns_its_json(capfd):
    doc = vkspec.bench(methods=["ar", "sjd"], images=1, warmup=0, classifier="none", model=MODEL, window=4)
    rows = [r["method"] for r in doc["results"]]
    assert rows == ["ar", "sjd"]
    err = capfd.readouterr().err
    assert not any(w in err for w in VALIDATION_WORDS), err
