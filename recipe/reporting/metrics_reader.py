"""One reader for both backends' training curves: a step-indexed table whose columns are NeMo-RL's TensorBoard tags.

Sources, first that has rows wins:
1. TensorBoard event files: the local backend's ``<stage dir>/tensorboard/``, or a cluster stage's NeMo-RL
   ``logger.log_dir`` of every job recorded in its manifest (``recipe cluster render``);
2. ``metrics.jsonl`` (written by both backends), its keys mapped to the same tags (``recipe.runs.tb_events``).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from recipe.runs import tb_events
from recipe.runs.layout import RunDir


def event_dirs(run: RunDir, stage: str) -> list[Path]:
    dirs = [tb_events.events_dir(run.stage_dir(stage))]
    m = run.read_manifest(stage) or {}
    for name, job in ((m.get("cluster") or {}).get("jobs") or {}).items():
        if isinstance(job, dict) and job.get("log_dir"):
            dirs.append(Path(job["log_dir"]))
    return [d for d in dirs if d.is_dir() and any(d.rglob("events.out.tfevents.*"))]


def read_event_scalars(log_dir: Path) -> dict[int, dict[str, float]]:
    """step -> {tag: value} from every event file under ``log_dir`` (later writes win)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    out: dict[int, dict[str, float]] = {}
    for f in sorted(Path(log_dir).rglob("events.out.tfevents.*"), key=lambda p: p.stat().st_mtime):
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            for ev in acc.Scalars(tag):
                out.setdefault(int(ev.step), {})[tag] = float(ev.value)
    return out


def stage_scalars(run: RunDir, stage: str) -> pd.DataFrame:
    """Step-indexed table of a stage's scalars under NeMo-RL tag names (``train/reward``, ``train/loss``...)."""
    by_step: dict[int, dict[str, float]] = {}
    for d in event_dirs(run, stage):
        for step, tags in read_event_scalars(d).items():
            by_step.setdefault(step, {}).update(tags)
    if not by_step:
        for r in run.read_metrics(stage):
            if "step" in r:
                by_step.setdefault(int(r["step"]), {}).update(
                    tb_events.row_scalars({k: v for k, v in r.items() if "/" not in k or k.startswith("reward/")}))
                by_step[int(r["step"])].update({k: float(v) for k, v in r.items()
                                                if k.startswith(("train/", "validation/")) and isinstance(v, (int, float))})
    if not by_step:
        raise FileNotFoundError(f"no metrics for stage {stage}: neither TensorBoard events nor {run.metrics_path(stage)}")
    return pd.DataFrame.from_dict(by_step, orient="index").sort_index().rename_axis("step")
