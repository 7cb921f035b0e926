"""Learning-rate schedules: linear warm-up from ``warmup_start_lr`` (default lr/10), then constant, cosine or
linear decay to ``min_lr`` over the planned steps (SFT: paper App. B Table 7; GRPO: RECIPE.md §4.2; MOPD §6)."""
from __future__ import annotations

import math

from recipe.config.stages import OptimizerMixin


def lr_at(step: int, cfg: OptimizerMixin, total_steps: int) -> float:
    """LR for 0-based optimizer ``step``.

    >>> from recipe.config.stages import SFTConfig
    >>> c = SFTConfig(lr=1.0, min_lr=0.0, lr_schedule="cosine", warmup_steps=2, warmup_start_lr=0.0, steps=4,
    ...               global_batch=1, max_seq_len=8)
    >>> [round(lr_at(s, c, 4), 3) for s in range(5)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    start = cfg.warmup_start_lr if cfg.warmup_start_lr is not None else cfg.lr / 10
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return start + (cfg.lr - start) * step / cfg.warmup_steps
    if cfg.lr_schedule == "constant":
        return cfg.lr
    span = max(1, total_steps - cfg.warmup_steps)
    frac = min(1.0, (step - cfg.warmup_steps) / span)
    if cfg.lr_schedule == "cosine":
        return cfg.min_lr + (cfg.lr - cfg.min_lr) * 0.5 * (1 + math.cos(math.pi * frac))
    return cfg.lr + (cfg.min_lr - cfg.lr) * frac
