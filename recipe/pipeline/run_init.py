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


def init_run(profile: str = "tiny", run_id: str | None = None, overrides: list[str] | tuple = (),
             cfg: RecipeConfig | None = None) -> tuple[RunDir, RecipeConfig]:
    """Resolve ``profile`` + ``overrides`` and write it as the run's config.yaml (creating the run if needed).
    The config is always what was asked for now: on an existing run, stages whose inputs this changes re-run and
    the others are skipped. (`recipe stage` and the notebooks reuse a run's stored config instead.)"""
    cfg = cfg or load_config(profile, overrides)  # callers that validated the config first pass it in
    run = RunDir.for_id(run_id or default_run_id(cfg))
    run.path.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run.config_path, config_to_yaml(cfg))
    prev = run.read_run_json() if run.exists() else {}
    run.update_run_json(
        run_id=run.run_id, profile=cfg.profile, config_hash=config_hash(cfg), seed=cfg.run.seed,
        git_commit=git_commit(), backend=cfg.run.backend,
        started=prev.get("started") or dt.datetime.now(dt.timezone.utc).isoformat(),
        overrides=list(overrides))
    return run, cfg


def open_or_init_run(run_id: str, profile: str = "tiny", overrides: list[str] | tuple = ()
                     ) -> tuple[RunDir, RecipeConfig]:
    """The run's stored config when it exists and no overrides are given; else ``init_run``."""
    if RunDir.for_id(run_id).config_path.exists() and not overrides:
        return open_run(run_id)
    return init_run(profile, run_id, overrides)


def open_run(run_id: str) -> tuple[RunDir, RecipeConfig]:
    run = RunDir.for_id(run_id)
    if not run.config_path.exists():
        raise FileNotFoundError(f"run {run_id!r} has no config.yaml at {run.config_path}; "
                                f"start it with `recipe run --run-id {run_id}`")
    cfg = load_config(run.config_path)
    return run, cfg
