"""Aggregate statistics of an evaluation: avg@k ± standard error, unbiased pass@k, bootstrap CIs.

- ``avg@k``: mean over items of each item's mean score over its k samples (x100). ``stderr`` is the standard error
  of that mean across items (sample sd / sqrt(n)); ``stderr_across_runs`` is NeMo-Skills' variant (sd of the k
  per-sample-index run averages / sqrt(k)), both reported.
- ``pass@k`` (Chen et al. 2021, unbiased): per item, 1 - C(n-c, k) / C(n, k) with n samples, c correct.
"""
from __future__ import annotations

import math
import random
from statistics import mean, stdev

from recipe.stats.intervals import percentile_interval


def pass_at_k(n: int, c: int, k: int) -> float:
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def stderr(values: list[float]) -> float:
    return stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def avg_at_k(per_item: list[list[float]]) -> dict:
    """``per_item``: each item's sample scores in [0, 1]. Returns percentages with their standard errors."""
    if not per_item:
        return {"score": None, "stderr": None, "ci95": None, "n": 0, "k": 0}
    item_means = [mean(s) for s in per_item]
    k = min(len(s) for s in per_item)
    runs = [mean(s[i] for s in per_item) for i in range(k)]
    se = 100 * stderr(item_means)
    score = 100 * mean(item_means)
    return {"score": round(score, 4), "stderr": round(se, 4),
            "ci95": [round(score - 1.96 * se, 4), round(score + 1.96 * se, 4)],
            "stderr_across_runs": round(100 * stderr(runs), 4), "n": len(per_item), "k": k}


def pass_at_ks(per_item: list[list[float]]) -> dict[str, float]:
    """pass@1 and pass@k (k = fewest samples of any item, and the powers of two below it); a sample passes at 1.0."""
    if not per_item:
        return {}
    k = min(len(s) for s in per_item)
    ks = sorted({1, k} | {2 ** i for i in range(1, 8) if 2 ** i < k})
    out = {}
    for kk in ks:
        out[f"pass@{kk}"] = round(100 * mean(pass_at_k(len(s), sum(1 for x in s if x >= 1.0), kk) for s in per_item), 4)
    return out


def bootstrap_ci(values: list[float], *, stat=mean, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> list[float]:
    """Percentile bootstrap CI of ``stat`` over ``values`` (resampled with replacement, seeded)."""
    if not values:
        return [float("nan"), float("nan")]
    rng = random.Random(seed)
    n = len(values)
    stats = sorted(stat([values[rng.randrange(n)] for _ in range(n)]) for _ in range(n_boot))
    return list(percentile_interval(stats, 1 - alpha))  # symmetric: of 1,000, indices 25 and 974
