"""The teacher-selection job runs inside the pinned container (pyxis srun, MOPD's code snapshot, the image's
/opt/recipe/venv), and that venv's package list covers every third-party package the selection imports."""
from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys
from pathlib import Path

from recipe.cluster.selection_job import CONTAINER_PYTHON, REQUIREMENTS_FILE, requirements_text, selection_argv
from recipe.config import load_config
from recipe.runs.layout import RunDir

ROOT = Path(__file__).resolve().parents[1]
BASE = ["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf", "cluster.data_root=/shared/data"]


def test_selection_runs_inside_the_container_from_the_snapshot(tmp_path):
    cfg = load_config("paper", overrides=BASE)
    run = RunDir(tmp_path / "runs" / "r1")
    argv = selection_argv(cfg, run, dependency="afterok:1", profile="paper", project_root=ROOT, overrides=BASE)
    wrap = argv[argv.index("--wrap") + 1]
    srun = shlex.split(wrap)
    assert srun[0] == "srun" and "--no-container-mount-home" in srun
    assert any(a.startswith("--container-image=nvcr.io#nvidia/nemo-rl") for a in srun)
    mounts = next(a for a in srun if a.startswith("--container-mounts=")).split("=", 1)[1].split(",")
    assert {f"{tmp_path / 'runs'}:{tmp_path / 'runs'}", "/shared/hf:/shared/hf", "/shared/data:/shared/data"} <= set(mounts)
    inner = srun[-1]
    assert inner.startswith(f"cd {run.stage_dir('mopd') / 'cluster' / 'code'} && ")
    assert f"{CONTAINER_PYTHON} -m recipe.cli cluster select-teachers --run-id r1" in inner
    assert sys.executable not in wrap                      # not the login node's Python


def test_selection_venv_requirements_follow_pyproject():
    assert (ROOT / REQUIREMENTS_FILE).read_text() == requirements_text((ROOT / "pyproject.toml").read_text())
    assert f"-r /opt/recipe/{REQUIREMENTS_FILE}" in (ROOT / "containers/Dockerfile").read_text()


def test_selection_imports_only_the_venvs_packages(tmp_path):
    """Run select-teachers in a fresh interpreter and list the third-party top-level modules it imported."""
    run = RunDir(tmp_path / "runs" / "sel")
    run.path.mkdir(parents=True)
    code = ("import runpy, sys\n"
            "sys.argv = ['recipe', 'cluster', 'select-teachers', '--run-id', 'sel', '--profile', 'paper'"
            + "".join(f", '-s', {o!r}" for o in BASE) + "]\n"
            "try:\n    runpy.run_module('recipe.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "std = set(sys.stdlib_module_names)\n"
            "print('MODS', sorted({m.split('.')[0] for m in sys.modules if not m.startswith(('recipe', '_'))} - std))\n")
    env = {**os.environ, "RECIPE_RUNS_DIR": str(tmp_path / "runs")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("MODS"))
    mods = set(ast.literal_eval(line[5:]))
    assert "not done" in p.stdout + p.stderr or "no teacher" in p.stdout + p.stderr   # it ran the selection
    # the import names of the venv's packages and what they pull in themselves
    allowed = {"pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection", "yaml",
               "typer", "click", "shellingham", "annotated_doc", "rich", "markdown_it", "mdurl", "pygments",
               "tensorboard", "numpy", "google", "absl", "grpc", "markdown", "werkzeug", "six", "fsspec",
               "cython_runtime", "packaging", "setuptools", "pkg_resources", "distutils", "PIL"}
    assert "torch" not in mods and mods <= allowed, mods - allowed
