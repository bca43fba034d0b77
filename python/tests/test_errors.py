"""Bad arguments raise vkspec.Error with the CLI's checks, named as the keyword arguments they
are (`top_k=`, not `--top-k`); Ctrl-C stops a generation cleanly."""
import _thread
import threading

import pytest

import vkspec
from conftest import ASSETS


def test_unknown_method(session):
    with pytest.raises(vkspec.Error, match="no-such-method"):
        session.generate("no-such-method")


def test_out_of_range_option(session):
    with pytest.raises(vkspec.Error, match="window"):
        session.generate("sjd", window=0)
    with pytest.raises(vkspec.Error, match="top_k="):
        session.generate("ar", top_k=-3)


def test_option_the_method_does_not_know(session):
    with pytest.raises(vkspec.Error, match="window="):
        session.generate("ar", window=4)
    with pytest.raises(vkspec.Error, match="unknown keyword argument"):
        session.generate("ar", no_such_option=1)


def test_errors_name_the_keyword_argument_not_the_option(session):
    # A refused value: ArgumentError, a vkspec.Error and a ValueError, naming `width=`.
    with pytest.raises(vkspec.ArgumentError) as bad:
        session.generate("sjd-pac", width=0)
    assert isinstance(bad.value, vkspec.Error) and isinstance(bad.value, ValueError)
    assert "width= must be in [1, 8]" in str(bad.value), str(bad.value)
    assert "--" not in str(bad.value), str(bad.value)
    with pytest.raises(ValueError, match=r"top_k= expects an integer, got 'x'"):
        session.generate("ar", top_k="x")
    # An unknown keyword: also a TypeError, as Python's "unexpected keyword argument" is.
    with pytest.raises(vkspec.UnknownArgumentError) as unknown:
        session.generate("ar", bogus=1)
    assert isinstance(unknown.value, TypeError) and isinstance(unknown.value, vkspec.Error)
    assert "unknown keyword argument 'bogus'" in str(unknown.value), str(unknown.value)
    assert "--" not in str(unknown.value), str(unknown.value)
    # steps() reads its options the same way.
    with pytest.raises(TypeError, match="unknown keyword argument 'bogus'"):
        session.steps("ar", bogus=1)
    # A method option given to a method without it, and a value the message repeats.
    with pytest.raises(vkspec.ArgumentError, match=r"keyword argument window= is not used"):
        session.generate("ar", window=4)
    single = next(m["name"] for m in vkspec.methods() if not m["batches"])
    with pytest.raises(vkspec.ArgumentError, match=rf"batch=4: {single} decodes one image per forward"):
        session.generate(single, batch=4)
    # Errors that name no option stay as they are.
    with pytest.raises(vkspec.Error, match="class 99") as plain:
        session.generate("ar", classes=99)
    assert not isinstance(plain.value, vkspec.ArgumentError)


def test_bad_class_and_seeds(session):
    with pytest.raises(vkspec.Error, match="class 99"):
        session.generate("ar", classes=99)
    with pytest.raises(vkspec.Error, match="seeds"):
        session.generate("ar", images=3, seeds=[1, 2])
    with pytest.raises(vkspec.Error, match="at least 1"):
        session.generate("ar", images=0)


def test_missing_model_file(tmp_path):
    missing = tmp_path / "missing.safetensors"
    with pytest.raises(vkspec.Error, match="missing.safetensors"):
        vkspec.Session(model=missing)
    with pytest.raises(vkspec.Error, match="unknown model file"):
        vkspec.Session(modle=ASSETS / "fmnist_gpt8.safetensors")


def test_error_is_a_runtime_error():
    assert issubclass(vkspec.Error, RuntimeError)


def test_ctrl_c_stops_between_steps(session):
    # The timer's thread needs the GIL to interrupt, and the run ends only by the interrupt: 100000
    # images would take hours, so a GIL held during the run, or no signal check between steps,
    # leaves this test to CTest's timeout.
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            session.generate("ar", images=100000)
    finally:
        timer.cancel()
    # The session is whole afterwards.
    assert session.generate("ar", images=1)["tokens"].shape[0] == 1
