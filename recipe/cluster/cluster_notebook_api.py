"""What the notebooks call when ``backend="cluster"`` (Cascade RL stage, SFT and MOPD notebooks).

Instead of training in-process, a notebook cell does::

    from recipe.cluster import cluster_notebook_api as nb
    result = nb.render_stage(run_id, stage)          # dry run: YAML + launch.sh + convert.sh + provenance
    print(nb.config_diff(result))                    # our keys vs the NeMo-RL release defaults
    nb.submit(result, submit=False)                  # prints the command; submit=True runs sbatch via launch.sh
    nb.monitor(run_id, stage)                        # progress from `recipe cluster status`

* ``render_stage(run_id, stage, *, allow_unpinned=False, allow_dirty=False, profile=None) -> RenderResult``
  loads the run's resolved ``config.yaml`` (or ``profile`` when the run has none yet) and renders the stage.
* ``config_diff(result) -> str`` lists, per job, each key we set as ``release default -> ours``; the release's
  YAML comes from ``$RECIPE_NEMO_RL_DIR`` or ``/opt/nemo-rl`` (our values only when neither exists).
* ``submit(result, *, submit: bool) -> list[str]`` returns the launch commands; with ``submit=True`` it runs each
  ``launch.sh`` (needs ``sbatch`` and ``NEMO_RL_CHECKOUT``); SWE's two jobs are submitted in order.
* ``monitor(run_id, stage) -> dict`` runs ``status.collect`` and returns status, per-job progress and the newest
  metrics row, so the notebook's plots read the same ``metrics.jsonl`` as with the local backend.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any, Optional

from recipe.cluster import status as _status
from recipe.cluster.release import ReleaseTree
from recipe.cluster.render import RenderResult
from recipe.cluster.render import render_stage as _render
from recipe.cluster.config_checks import config_diff_text
from recipe.runs.layout import RunDir


def load_run_config(run: RunDir, profile: Optional[str] = None, overrides: tuple[str, ...] = ()):
    from recipe.config import load_config

    if run.config_path.is_file() and profile is None:
        return load_config(run.config_path, overrides=overrides)
    return load_config(profile or "paper", overrides=overrides)


def render_stage(run_id: str, stage: str, *, allow_unpinned: bool = False, allow_dirty: bool = False,
                 profile: Optional[str] = None, overrides: tuple[str, ...] = (), out: Optional[Path] = None,
                 input_model: Optional[str] = None, defer_teachers: bool = False) -> RenderResult:
    run = RunDir.for_id(run_id)
    run.path.mkdir(parents=True, exist_ok=True)
    cfg = load_run_config(run, profile, overrides)
    return _render(cfg, run, stage, out=out, allow_unpinned=allow_unpinned, allow_dirty=allow_dirty,
                   input_model=input_model, defer_teachers=defer_teachers)


def config_diff(result: RenderResult, release_dir: Optional[Path] = None) -> str:
    tree = ReleaseTree.find(release_dir)
    return "".join(config_diff_text(j.config_path, j.base_config, j.overrides, tree) for j in result.jobs)


def submit(result: RenderResult, *, submit: bool) -> list[str]:
    cmds = [f"bash {j.launch_path}" for j in result.jobs]
    if not submit:
        return cmds
    if shutil.which("sbatch") is None:
        raise RuntimeError("sbatch not found: submit from a Slurm login node (the rendered launch scripts are in "
                           f"{result.out_dir})")
    for j in result.jobs:
        subprocess.run(["bash", str(j.launch_path)], check=True)
    return cmds


def monitor(run_id: str, stage: str) -> dict[str, Any]:
    run = RunDir.for_id(run_id)
    m = _status.collect(run, stage)
    return {"stage": stage, "status": m["status"], "progress": m.get("progress", {}),
            "latest_metrics": m.get("metrics_summary"), "validation": run.read_validation(stage)}
