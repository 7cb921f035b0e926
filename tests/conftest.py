"""Shared test fixtures.

Tests that read the genuine fixture rows in ``../shared`` (beside the project folder) use the
``shared_dir`` fixture: they run where ``../shared`` exists (developer machines, CI) and skip with a
stated reason elsewhere. Tests that must run everywhere build their own small fixtures.

The reference IFEval / IFBench checkers read NLTK data (recipe/rewards/nltk_data.py); where ``../shared/nltk_data``
exists it is put first on ``NLTK_DATA`` (inherited by the subprocesses tests start), so no test downloads it.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("RECIPE_SHARED_DIR", PROJECT_ROOT.parent / "shared"))
# per-machine choices the product stores (recipe.model.decode.llama.kv_dtype_store) go to a folder of the test
# session, not the user's ~/.cache; subprocesses inherit it
os.environ.setdefault("RECIPE_MACHINE_CACHE", tempfile.mkdtemp(prefix="recipe-machine-cache-"))
# The product reads benchmark files from a mirror only when told (benchmarks.mirror or $RECIPE_BENCHMARK_MIRROR);
# the tests tell it where the genuine fixtures are, from the same lookup that the shared_dir fixture skips on, so a
# test that needs them and the code it runs can never disagree about whether they exist.
if (SHARED_DIR / "fixtures").is_dir():
    os.environ.setdefault("RECIPE_BENCHMARK_MIRROR", str(SHARED_DIR))
if (SHARED_DIR / "nltk_data").is_dir():
    os.environ["NLTK_DATA"] = os.pathsep.join(p for p in (str(SHARED_DIR / "nltk_data"), os.environ.get("NLTK_DATA")) if p)
# ``make test`` runs as many pytest-xdist workers as cores: each worker (and every process it starts: stage runs,
# papermill kernels) computes on one thread. Two workers each asking torch / OpenMP for every core oversubscribe
# the machine, and OpenMP's waiting threads then slow a long in-process run several times over.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) >= (os.cpu_count() or 1):
    os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


@pytest.fixture(scope="session")
def project_root() -> Path:
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path of ../shared; skips the test when it is absent (e.g. a clone outside the workplace)."""
    if not (SHARED_DIR / "fixtures").is_dir():
        pytest.skip(f"../shared/fixtures not found at {SHARED_DIR}: genuine fixture rows are only available beside the project")
    return SHARED_DIR


def nltk_data_absent() -> str | None:
    """Why the reference checkers cannot run here, or None: NLTK's data is found neither in ``../shared/nltk_data``
    nor in the project's or NLTK's folders (a clone outside the workplace, with no network to download it)."""
    if (SHARED_DIR / "nltk_data").is_dir():
        return None
    from recipe.rewards import nltk_data
    still = nltk_data.missing()
    return (f"NLTK data {still} not found ({SHARED_DIR / 'nltk_data'} is absent and nothing on NLTK's path holds it): "
            "the reference IFEval / IFBench checkers need it") if still else None


@pytest.fixture(scope="session")
def nltk_ready() -> None:
    """Skips the test where the reference checkers' NLTK data is absent (``nltk_data_absent``)."""
    reason = nltk_data_absent()
    if reason:
        pytest.skip(reason)


def _skip_where_nltk_data_is_absent():
    """A test (or its fixtures) that stops on NltkDataMissing is skipped with the reason where the data is absent
    from this machine (no ``../shared/nltk_data``); where ``../shared`` holds it, the error stays a failure."""
    from recipe.rewards.nltk_data import NltkDataMissing
    try:
        return (yield)
    except NltkDataMissing as e:
        if (SHARED_DIR / "nltk_data").is_dir():
            raise
        pytest.skip(f"{SHARED_DIR / 'nltk_data'} is absent: {e}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _skip_where_nltk_data_is_absent())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _skip_where_nltk_data_is_absent())


@pytest.hookimpl(trylast=True)
@pytest.fixture
def empty_nltk_search_path(tmp_path, monkeypatch) -> Path:
    """No NLTK data on any path the project searches (its folder is an empty one under tmp_path), and nothing that an
    earlier test of this worker loaded: NLTK's resource cache and the lru_caches around the punkt tokenizer (NLTK's
    and the reference checkers') would otherwise split sentences without looking for the data."""
    import sys

    import nltk

    from recipe.rewards import nltk_data
    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setattr(nltk_data, "_EXTRA_FOLDERS", [])
    monkeypatch.setenv("RECIPE_NLTK_DATA", str(tmp_path / "project_nltk"))
    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.delenv("RECIPE_BENCHMARK_MIRROR", raising=False)  # the mirror set above holds nltk_data/
    monkeypatch.setattr(nltk.data, "_resource_cache", {})
    for name in ("nltk.tokenize", "lm_eval.tasks.ifeval.instructions_util", "ifbench.instructions_util"):
        module = sys.modules.get(name)
        for obj in vars(module).values() if module else ():
            if callable(getattr(obj, "cache_clear", None)):
                obj.cache_clear()
    return tmp_path


def pytest_collection_modifyitems(session, config, items):
    """The files of tests marked ``starts_first`` move to the front after pytest-random-order's shuffle (the rest
    keeps the shuffled order, and a printed seed still replays it), in the order of the marker's ``rank`` (lowest
    first; files of one rank keep their shuffled order). ``make test`` hands whole files to its workers
    (``--dist loadfile``, in this order): a file's module fixtures (a served model, a judged set of submissions, the
    small smoke run) are built once, and the longest files start first while the other worker works through the
    rest. A file that serves with vLLM ranks behind the longest files: ``make test`` installs the vLLM venv beside the
    first tests, and a worker that started such a file at once would wait for the install, idle."""
    rank: dict = {}
    for it in items:
        mark = it.get_closest_marker("starts_first")
        if mark is not None:
            rank[it.path] = mark.kwargs.get("rank", 0)
    if rank:
        # sorted() is stable: files of one rank keep the shuffled order
        first = sorted((it for it in items if it.path in rank), key=lambda it: rank[it.path])
        items[:] = first + [it for it in items if it.path not in rank]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print the shuffled order's seed last (``make test`` runs quiet, which hides pytest-random-order's header),
    so that a failure that depends on order can be replayed with the same flags."""
    if not config.pluginmanager.hasplugin("random_order"):  # run without the plugin (-p no:random_order)
        return
    from random_order.config import Config  # pytest-random-order, pinned in the dev extra
    order = Config(config)
    if order.is_enabled and order.bucket_type != "none":
        terminalreporter.write_line(f"test order: shuffled; replay it with -p random_order "
                                    f"--random-order-bucket={order.bucket_type} --random-order-seed={order.seed}")


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test (make test runs two workers on two cores; small matmuls repeat exactly)."""
    import torch
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
