"""The chain's teacher-selection job (``recipe cluster select-teachers`` before MOPD), run inside the pinned container.

A one-node CPU job: ``srun`` starts the container (pyxis, the same image and mounts as the training jobs, no home
mount) and runs the selection from MOPD's code snapshot (``<mopd stage>/cluster/code``, written when the chain is
rendered) with ``/opt/recipe/venv``'s Python. That venv is built into the derived image
(``containers/Dockerfile``) from ``containers/selection-requirements.txt``: the third-party packages the selection
imports (config, CLI, TensorBoard reader), pinned as in ``pyproject.toml``; torch and the rest are not needed, so the
offline compute node installs nothing. ``python -m recipe.cli`` run from the snapshot imports the snapshot's package.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Optional

from recipe.runs.layout import RunDir

SELECTION_JOB = "teacher_selection"
CONTAINER_PYTHON = "/opt/recipe/venv/bin/python"
# what `recipe cluster select-teachers` imports besides the standard library (tests/test_cluster_selection_job.py)
SELECTION_PACKAGES = ("pydantic", "pyyaml", "typer", "rich", "tensorboard", "numpy")
REQUIREMENTS_FILE = "containers/selection-requirements.txt"


def requirements_text(pyproject: str) -> str:
    """``containers/selection-requirements.txt``: ``SELECTION_PACKAGES`` with the pins of ``pyproject.toml``."""
    pins = dict(re.findall(r'^\s*"([A-Za-z0-9_.-]+)==([^"]+)",', pyproject, re.M))
    lines = [f"{p}=={pins[p]}" for p in SELECTION_PACKAGES]
    return ("# Generated from pyproject.toml by recipe.cluster.selection_job.requirements_text; do not edit.\n"
            "# The teacher-selection job's Python inside the image (containers/Dockerfile, /opt/recipe/venv).\n"
            + "\n".join(lines) + "\n")


def container_ref(cfg, project_root: Path) -> str:
    from recipe.cluster.lock import read_lock

    cl = cfg.cluster
    return cl.container.sqsh or read_lock(project_root / cl.container.lock_file).pyxis_ref


def selection_argv(cfg, run: RunDir, *, dependency: Optional[str], profile: str, project_root: Path,
                   overrides: list[str]) -> list[str]:
    """The teacher-selection job's ``sbatch`` command (module doc)."""
    cl = cfg.cluster
    log_dir = run.stage_dir("mopd") / "teacher_selection"
    snapshot = run.stage_dir("mopd") / "cluster" / "code"
    roots = [str(run.path.parent), cl.hf_home, cl.data_root, *[m.split(":")[0] for m in cl.mounts]]
    mounts = ",".join(dict.fromkeys(f"{r}:{r}" for r in roots if r))
    inner = (f"cd {shlex.quote(str(snapshot))} && RECIPE_RUNS_DIR={shlex.quote(str(run.path.parent))} "
             f"{CONTAINER_PYTHON} -m recipe.cli cluster select-teachers --run-id {shlex.quote(run.run_id)} "
             f"--profile {shlex.quote(profile)}" + "".join(f" -s {shlex.quote(o)}" for o in overrides))
    wrap = (f"srun --no-container-mount-home --container-image={shlex.quote(container_ref(cfg, project_root))} "
            f"--container-mounts={shlex.quote(mounts)} bash -c {shlex.quote(inner)}")
    args = ["sbatch", "--parsable", f"--job-name=recipe-{run.run_id}-{SELECTION_JOB}", "--nodes=1", "--time=01:00:00",
            f"--account={cl.account}", f"--partition={cl.partition}", f"--output={log_dir}/%j.out"]
    if dependency:
        args.append(f"--dependency={dependency}")
    return args + ["--wrap", wrap]
