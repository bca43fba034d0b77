"""vkspec from Python: speculative decoding of autoregressive image models on any Vulkan device.

The functions below run on a `Session` (the device and the models, opened once); the
module-level ones use a default session on the shipped models. Keyword arguments are the
`vkspec generate` / `vkspec bench` options with `_` for `-` (`top_k=50` is `--top-k 50`,
`window=16` is the method option `--window 16`), read by the command's own parsers, so the
names, ranges and checks are the command's; an error names the keyword argument, not the option
(`top_k= must be in [0, ...]`, "unknown keyword argument 'bogus'"). Errors raise `vkspec.Error`;
a refused keyword argument raises `vkspec.ArgumentError` (also a ValueError), an unknown one
`vkspec.UnknownArgumentError` (also a TypeError), both `vkspec.Error`s.
See docs/python.md.
"""
import contextlib
import json
import os
import re
import sys
import tempfile


def _wrong_interpreter(error):
    """The ImportError to raise when numpy or the native part does not import: it names the
    interpreter this build is for (build/python/PYTHON, vkspec/_build_info.py) and this one."""
    try:
        from ._build_info import PYTHON, PYTHON_REAL, PYTHON_VERSION
    except ImportError:
        return None
    here = os.path.realpath(sys.executable) if sys.executable else ""
    if here == PYTHON_REAL:
        return None  # the right interpreter: the error is something else, raised as it is
    return ImportError(
        f"vkspec was built for the Python interpreter {PYTHON} (Python {PYTHON_VERSION}), but this is "
        f"{sys.executable or 'an unknown interpreter'} (sys.executable), a different one: {error}. Run it "
        f"with {PYTHON} (a build names it in build/python/PYTHON), or rebuild with "
        f"-DPython3_EXECUTABLE={sys.executable or 'PATH'} for this one.")


try:
    import numpy as np

    from ._native import Error
    from . import _native
except ImportError as _error:
    _wrong = _wrong_interpreter(_error)
    if _wrong is None:
        raise
    raise _wrong from _error

Error.__module__ = "vkspec"  # shown as vkspec.Error, the name users catch


class ArgumentError(Error, ValueError):
    """A keyword argument vkspec refuses (its value, or with others it excludes); the message
    names it as a keyword (`top_k=`)."""


class UnknownArgumentError(ArgumentError, TypeError):
    """A keyword argument no option of the call has (as Python's "unexpected keyword argument")."""


__all__ = ["Error", "ArgumentError", "UnknownArgumentError", "Session", "devices", "methods", "generate", "steps",
           "bench", "default_session"]

# Session(...) keyword -> the model-file option it stands for (frontend/model_catalog.h).
_MODEL_FILES = ("model", "vq", "drafter", "low_res", "heads", "latent_heads", "eagle_drafter", "sr_net",
                "latent_upsampler", "flashar")


def _cli_args(options):
    """{'top_k': 50, 'profile': True, 'methods': ['ar', 'sjd']} -> ['--top-k', '50', '--profile', '--methods', 'ar,sjd']."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = "--" + key.replace("_", "-")
        if value is True:
            args.append(name)
        elif isinstance(value, (list, tuple)):
            args += [name, ",".join(str(v) for v in value)]
        else:
            args += [name, str(value)]
    return args


# An option the native part names (the CLI's spelling), its tail of `/-b/-c` siblings
# (`--entropy-a/-b/-c`), and the word after it, which may be its value (`--batch 4`).
_OPTION = re.compile(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)((?:/-[a-z0-9]+)*)(?: ([^\s,;:()]+))?")
_PLACEHOLDER_OR_NUMBER = re.compile(r"[A-Z]+|-?[0-9][0-9.e+-]*")


def _keyword_message(message, keywords, values):
    """`message` with the CLI's option spellings as the keyword arguments they stand for, or None
    when it names no option. keywords: option -> keyword ({'--top-k': 'top_k', '--class': 'classes'});
    other options become their keyword by rule (`--top-k` -> `top_k`). values: option -> the text
    the call gave it, so that `--batch 4` reads `batch=4` (as do numbers and FILE-like placeholders)."""

    def keyword(option):
        return keywords.get(option, option[2:].replace("-", "_"))

    text = re.sub(r"unknown option '(--[^']+)'(?: \(--help lists the options\))?",
                  lambda m: f"unknown keyword argument '{keyword(m.group(1))}'", message)
    text = re.sub(r"\boption (?=--[a-z0-9])", "keyword argument ", text)

    def spelled(m):
        option, siblings, word = "--" + m.group(1), m.group(2), m.group(3)
        out = keyword(option) + "="
        stem = option.rsplit("-", 1)[0]
        for sibling in siblings.split("/-")[1:]:  # --entropy-a/-b/-c: entropy_a=/entropy_b=/entropy_c=
            out += "/" + keyword(stem + "-" + sibling) + "="
        if word is None:
            return out
        if not siblings and (word == values.get(option) or _PLACEHOLDER_OR_NUMBER.fullmatch(word)):
            return out + word
        return out + " " + word

    text = _OPTION.sub(spelled, text)
    return None if text == message else text


@contextlib.contextmanager
def _keyword_errors(options, renamed=None):
    """Errors of the native call inside, which reads `options` (a call's keyword arguments) as CLI
    options, re-raised naming those keyword arguments: ArgumentError, or UnknownArgumentError for
    an unknown one. renamed: option -> keyword where they differ by more than `_`/`-` ({'--class':
    'classes'})."""
    keywords = dict(renamed or {})
    values = {}
    for key, value in options.items():
        option = "--" + key.replace("_", "-")
        keywords[option] = key
        if isinstance(value, (list, tuple)):
            values[option] = ",".join(str(v) for v in value)
        elif value is not None and not isinstance(value, bool):
            values[option] = str(value)
    try:
        yield
    except ArgumentError:
        raise
    except Error as error:
        message = _keyword_message(str(error), keywords, values)
        if message is None:
            raise
        kind = UnknownArgumentError if "unknown keyword argument" in message else ArgumentError
        raise kind(message) from None


class _Captions:
    """A caption's embeddings as the file --caption-embeddings reads: a path as it is, an array
    ([tokens, dim] or [1, tokens, dim]; all-zero tokens are padding) saved as .npy for the call."""

    def __init__(self, captions):
        self.path, self._dir = None, None
        if captions is None:
            return
        if isinstance(captions, (str, os.PathLike)):
            self.path = os.fspath(captions)
            return
        values = np.asarray(captions, dtype=np.float32)
        if values.ndim == 2:
            values = values[None]
        self._dir = tempfile.TemporaryDirectory(prefix="vkspec-caption-")
        self.path = os.path.join(self._dir.name, "caption.npy")
        np.save(self.path, values)

    def args(self):
        return ["--caption-embeddings", self.path] if self.path else []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._dir:
            self._dir.cleanup()


def _seed_list(images, seed, seeds):
    if seeds is None:
        return list(range(int(seed), int(seed) + int(1 if images is None else images)))
    seeds = [int(s) for s in seeds]
    if images is not None and images != len(seeds):
        raise Error(f"generate: images={images} but {len(seeds)} seeds")
    return seeds


def _class_list(classes, n):
    if classes is None:
        return []
    if isinstance(classes, (int, np.integer)):
        return [int(classes)] * n
    return [int(c) for c in classes]


# The CLI options a call's own parameters stand for, where the names differ.
_GENERATE_RENAMED = {"--class": "classes", "--caption-embeddings": "captions", "--seed": "seed"}
_STEPS_RENAMED = {"--class": "cls", "--caption-embeddings": "captions", "--seed": "seed"}


class Session:
    """A device and the models calls need, opened once and kept: `Session(model=PATH, vq=PATH, ...)`
    takes the model files `vkspec generate` takes (default: the shipped ones in assets/)."""

    def __init__(self, **model_files):
        unknown = sorted(set(model_files) - set(_MODEL_FILES))
        if unknown:
            raise Error(f"vkspec.Session: unknown model file {unknown[0]!r} (known: {', '.join(_MODEL_FILES)})")
        files = {k: os.fspath(v) for k, v in model_files.items() if v is not None}
        with _keyword_errors(files):
            self._native = _native.Session(_cli_args(files))

    @property
    def device(self):
        return self._native.device

    @property
    def grid_size(self):
        return self._native.grid_size

    @property
    def num_classes(self):
        return self._native.num_classes

    def generate(self, method="ar", images=None, seed=0, seeds=None, classes=None, captions=None, **options):
        """Images with seeds seed, seed + 1, ... (or `seeds`), as `vkspec generate` makes them.

        classes: one class for all, one per image, or None (image i has class i mod the classes).
        captions: a text-to-image model's caption embeddings (file or array) instead of classes.
        prompt: a prompt-driven model's text (Janus-Pro: `prompt="an ankle boot"`) instead of classes.
        options: sampler settings (cfg, temperature, top_k, top_p, ...), batch, method options.
        Returns a dict: images uint8 [N, H, W, 3], tokens int32 [N, L], stats (one dict per image:
        nfe, draft_forwards, head_forwards, accepted_length, wall_ms, ...), method, options, sampler.
        """
        seed_list = _seed_list(images, seed, seeds)
        with _Captions(captions) as cap, _keyword_errors(options, _GENERATE_RENAMED):
            return self._native.generate(method, _cli_args(options) + cap.args(), seed_list,
                                         _class_list(classes, len(seed_list)))

    def steps(self, method="ar", seed=0, cls=0, captions=None, images=True, **options):
        """An iterator over one image's decoding steps, each a dict: proposed, proposed_tokens,
        accepted, rejected, resampled (positions), islands, groups, grid (int32 [G, G], -1 where
        undecided), committed, nfe, ms, and with images=True the partial image (uint8 [H, W, 3];
        undecided cells drawn as token 0). A prompt-driven model takes prompt=TEXT instead of cls."""
        with _Captions(captions) as cap, _keyword_errors(options, _STEPS_RENAMED):
            return _native.StepRun(self._native, method, _cli_args(options) + cap.args(), int(seed), int(cls),
                                   bool(images))

    def bench(self, **options):
        """`vkspec bench` on this session's model files; returns what --json writes, as a dict."""
        return _bench(self._native.model_args, options)

    def validation_messages(self):
        """Validation-layer messages since the last call (with VKSPEC_VALIDATION=1)."""
        return self._native.validation_messages()


def _bench(model_args, options):
    given = options.pop("json", None)
    with tempfile.TemporaryDirectory(prefix="vkspec-bench-") as d:
        path = os.fspath(given) if given else os.path.join(d, "bench.json")
        rc = _native.run_bench(model_args + _cli_args(options) + ["--json", path])
        if rc != 0:
            raise Error(f"bench exited with status {rc}")
        with open(path) as f:
            return json.load(f)


_default = None


def default_session():
    """The session the module-level functions use: the shipped models, opened on first use."""
    global _default
    if _default is None:
        _default = Session()
    return _default


def devices():
    """Every Vulkan device's capability record, as `vkspec devices --json` prints it."""
    return [json.loads(r) for r in _native.device_records()]


def methods():
    """Every registered decoding method: name, summary, reference, lossless (with default
    options), losslessness (as `vkspec methods` says it: "lossless", "lossy", or "lossy by default,
    lossless with --accept exact"), batches, and its options (name, type, default, min/max or
    choices, help)."""
    return _native.methods()


def generate(method="ar", **kwargs):
    """Session.generate on the default session."""
    return default_session().generate(method, **kwargs)


def steps(method="ar", **kwargs):
    """Session.steps on the default session."""
    return default_session().steps(method, **kwargs)


def bench(**options):
    """`vkspec bench` with these options (model files included: model=..., vq=...); returns the
    --json document as a dict. It opens its own device, as the command does."""
    return _bench([], options)
