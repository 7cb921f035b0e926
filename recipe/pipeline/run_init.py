"""Create or reopen a run directory: ``run.json`` (provenance) and ``config.yaml`` (the resolved config)."""
from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from recipe.config import config_hash, config_to_yaml, load_config
from recipe.config.schema import RecipeConfig
from recipe.runs.layout import RunDir, write_text_atomic


def git_commit(cwd: Path | None = None) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd or Path(__file__).parent, capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def default_run_id(cfg: RecipeConfig) -> str:
    return f"{cfg.profile}-seed{cfg.run.seed}"


def init_run(profile: str = "tiny", run_id: str | None = None, overrides: list[str] | tuple = ()) -> tuple[RunDir, RecipeConfig]:
    """Resolve the config and write it into the run dir. An existing run keeps its config unless overrides or a
    different profile are given, in which case the new config replaces it (stages whose inputs changed re-run)."""
    cfg = load_config(profile, overrides)
    run = RunDir.for_id(run_id or default_run_id(cfg))
    if run.config_path.exists() and not overrides and Path(profile).name == run.read_run_json().get("profile"):
        cfg = load_config(run.config_path)
    run.path.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run.config_path, config_to_yaml(cfg))
    prev = run.read_run_json() if run.exists() else {}
    run.update_run_json(
        run_id=run.run_id, profile=cfg.profile, config_hash=config_hash(cfg), seed=cfg.run.seed,
        git_commit=git_commit(), backend=cfg.run.backend,
        started=prev.get("started") or dt.datetime.now(dt.timezone.utc).isoformat(),
        overrides=list(overrides))
    return run, cfg


def open_run(run_id: str) -> tuple[RunDir, RecipeConfig]:
    run = RunDir.for_id(run_id)
    if not run.config_path.exists():
        raise FileNotFoundError(f"run {run_id!r} has no config.yaml at {run.config_path}; "
                                f"start it with `recipe run --run-id {run_id}`")
    cfg = load_config(run.config_path)
    return run, cfg
