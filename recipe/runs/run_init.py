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


class RunMismatch(ValueError):
    """An existing run was asked for with another profile or other overrides than it was created with."""


def _profile_name(profile: str | Path) -> str:
    from recipe.config.loader import available_profiles
    return str(profile) if str(profile) in available_profiles() else load_config(profile).profile


def check_run_matches(run: RunDir, profile: str | Path | None, overrides: list[str] | tuple) -> None:
    """Refuse a profile or overrides that differ from what the run was created with (naming both values).
    ``profile=None`` / empty ``overrides`` mean "whatever the run has"."""
    stored = run.read_run_json()
    if profile is not None and stored.get("profile") is not None and str(profile) != stored["profile"]:
        asked = _profile_name(profile)
        if asked != stored["profile"]:
            raise RunMismatch(f"run {run.run_id!r} was created with profile {stored['profile']!r}, but profile "
                              f"{asked!r} was asked for; use another run_id, or the run's profile")
    if overrides and list(overrides) != list(stored.get("overrides") or []):
        raise RunMismatch(f"run {run.run_id!r} was created with overrides {list(stored.get('overrides') or [])!r}, "
                          f"but overrides {list(overrides)!r} were asked for; use another run_id, or re-resolve "
                          f"the run on purpose with `recipe run --run-id {run.run_id} -s ...` (changed stages re-run)")


def open_or_init_run(run_id: str, profile: str | Path | None = "tiny", overrides: list[str] | tuple = (), *,
                     reconfigure: bool = False) -> tuple[RunDir, RecipeConfig]:
    """The run's stored config when it exists (a different profile or different overrides is an error, unless
    ``reconfigure``: then the config is re-resolved from ``profile`` + ``overrides``); else ``init_run``."""
    run = RunDir.for_id(run_id)
    if run.config_path.exists() and run.exists():
        if reconfigure and overrides:
            check_run_matches(run, profile, ())
            return init_run(profile or run.read_run_json()["profile"], run_id, overrides)
        check_run_matches(run, profile, overrides)
        return open_run(run_id)
    return init_run(profile or "tiny", run_id, overrides)


def open_run(run_id: str) -> tuple[RunDir, RecipeConfig]:
    run = RunDir.for_id(run_id)
    if not run.config_path.exists():
        raise FileNotFoundError(f"run {run_id!r} has no config.yaml at {run.config_path}; "
                                f"start it with `recipe run --run-id {run_id}`")
    cfg = load_config(run.config_path)
    return run, cfg
