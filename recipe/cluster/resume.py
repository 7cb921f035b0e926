"""Explicit resume on top of NeMo-RL's unconditional auto-resume (NEMO_RL.md §7, RL#345).

At setup every NeMo-RL algorithm loads the newest ``step_N`` of ``checkpointing.checkpoint_dir``; there is no
opt-out. So the policy is applied by choosing and preparing that directory at render time:

* ``auto``        ``<stage>/nemo_rl/checkpoints``: continue from the newest complete step (fresh if none).
* ``never``       a new, empty ``<stage>/nemo_rl/checkpoints-<UTC time>``. Later Slurm segments of the same
                  rendered job reuse it (the path is fixed in the YAML), so ``never`` means "this render starts fresh".
* ``from_step=N`` the ``auto`` directory with every ``step_M`` (M > N) moved aside into
                  ``<stage>/nemo_rl/pruned-<UTC time>/`` (never deleted), so N is the newest and NeMo-RL resumes
                  there. N must exist.

``tmp_step_*`` directories are half-written checkpoints (NeMo-RL renames them when complete) and are ignored.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

STEP_RE = re.compile(r"^step_(\d+)$")


def step_dirs(ckpt_dir: Path) -> dict[int, Path]:
    ckpt_dir = Path(ckpt_dir)
    if not ckpt_dir.is_dir():
        return {}
    return {int(m.group(1)): p for p in ckpt_dir.iterdir() if p.is_dir() and (m := STEP_RE.match(p.name))}


@dataclass
class ResumePlan:
    mode: str
    checkpoint_dir: Path
    resume_step: Optional[int]          # the step NeMo-RL will load (None = fresh start)
    moved_aside: list[str] = field(default_factory=list)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def plan_resume(nemo_rl_dir: Path, resume: str, *, apply: bool = True) -> ResumePlan:
    """Choose (and with ``apply`` prepare) the checkpoint dir for ``resume`` = auto | never | from_step=N."""
    nemo_rl_dir = Path(nemo_rl_dir)
    auto_dir = nemo_rl_dir / "checkpoints"
    if resume == "auto":
        steps = step_dirs(auto_dir)
        return ResumePlan("auto", auto_dir, max(steps) if steps else None)
    if resume == "never":
        fresh = nemo_rl_dir / f"checkpoints-{_stamp()}"
        i = 1
        while fresh.exists():
            fresh = nemo_rl_dir / f"checkpoints-{_stamp()}-{i}"
            i += 1
        if apply:
            fresh.mkdir(parents=True)
        return ResumePlan("never", fresh, None)
    m = re.fullmatch(r"from_step=(\d+)", resume)
    if not m:
        raise ValueError(f"resume {resume!r}: expected auto, never or from_step=N")
    n = int(m.group(1))
    steps = step_dirs(auto_dir)
    if n not in steps:
        raise FileNotFoundError(f"resume from_step={n}: {auto_dir}/step_{n} does not exist; available steps: "
                                f"{sorted(steps) or 'none'}")
    newer = sorted(s for s in steps if s > n)
    plan = ResumePlan("from_step", auto_dir, n)
    if newer:
        aside = nemo_rl_dir / f"pruned-{_stamp()}"
        for s in newer:
            plan.moved_aside.append(str(aside / steps[s].name))
            if apply:
                aside.mkdir(parents=True, exist_ok=True)
                shutil.move(str(steps[s]), str(aside / steps[s].name))
    return plan
