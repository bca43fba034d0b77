"""Shared fixtures: a session on the shipped 8x8 model (the cheapest), the vkspec binary for
comparisons, and a check after every test that the validation layer said nothing."""
import os
import pathlib

import pytest

import vkspec

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
MODEL = ASSETS / "fmnist_gpt8.safetensors"
# Words the Khronos layer's messages carry (as tools/fault_table.py looks for them).
VALIDATION_WORDS = ("Validation Error", "Validation Warning", "VUID-", "SYNC-HAZARD")


@pytest.fixture(scope="session")
def session():
    return vkspec.Session(model=MODEL)


@pytest.fixture(autouse=True)
def no_validation_messages(request):
    yield
    if "session" in request.fixturenames:
        messages = request.getfixturevalue("session").validation_messages()
        assert messages == [], f"validation messages: {messages[:3]}"


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("VKSPEC_CLI", str(ROOT / "build" / "cli" / "vkspec"))
    if not os.path.exists(path):
        pytest.fail(f"the vkspec binary {path} is missing (VKSPEC_CLI names it)")
    return path


def pytest_sessionfinish(session, exitstatus):
    # A file whose every test skipped (no PyTorch) exits 77, which CTest reports as skipped, as
    # the CLI's scripts do (SKIP_RETURN_CODE 77), instead of as passed (0) or as collecting no
    # tests (5: what a module-level skip gives).
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus in (0, 5) and reporter and reporter.stats.get("skipped") and not reporter.stats.get("passed"):
        session.exitstatus = 77
