"""How many Slurm segments a stage needs: its steps × the profile's estimated step time
(``cluster.stages.<stage>.step_time_s``), over the time a segment trains (the Slurm limit minus the checkpoint margin,
NeMo-RL's ``checkpoint_must_save_by``, minus the profile's start-up allowance for Ray, vLLM and the model load)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from recipe.config.cluster_section import parse_slurm_time


@dataclass(frozen=True)
class SegmentPlan:
    segments: int
    expected_wall_s: Optional[float]   # steps × step time + start-up per segment; None when a factor is unknown
    steps: Optional[int]
    step_time_s: Optional[float]

    def describe(self) -> str:
        if self.expected_wall_s is None:
            return (f"{self.segments} segment(s): steps or step time unknown (set steps and "
                    f"cluster.stages.<stage>.step_time_s), resubmit with SEGMENTS=k")
        return (f"{self.segments} segment(s), ~{self.expected_wall_s / 3600:.1f} h expected "
                f"({self.steps} steps × {self.step_time_s:g} s, estimated in the profile)")


def plan_segments(steps: Optional[int], step_time_s: Optional[float], time_limit: str, margin_min: int,
                  startup_s: float) -> SegmentPlan:
    """Segments for ``steps`` at ``step_time_s`` each; refuses a segment too short to train a step."""
    usable = parse_slurm_time(time_limit) - margin_min * 60 - startup_s
    if not steps or not step_time_s:
        return SegmentPlan(1, None, steps, step_time_s)
    if usable < step_time_s:
        raise ValueError(f"a {time_limit} segment leaves {max(usable, 0) / 60:.0f} min after the checkpoint margin and "
                         f"start-up, less than one {step_time_s:g} s step: raise the stage's time_limit")
    n = math.ceil(steps * step_time_s / usable)
    return SegmentPlan(n, steps * step_time_s + n * startup_s, steps, step_time_s)
