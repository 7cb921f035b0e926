"""Mean ± standard error over items (each item's score already averaged over its k samples), on the project's
one interval convention (``recipe.stats.mean_ci``: normal interval over items, n = items)."""
from __future__ import annotations

import math
from typing import Iterable

from recipe.stats import mean_ci


def mean_se(values: Iterable[float], bounds: tuple[float, float] | None = (0.0, 100.0)) -> dict:
    """{"mean", "se", "ci95": [lo, hi], "n"}: SE = sample std / sqrt(n) (0 for n = 1; None everywhere for n = 0)."""
    v = [float(x) for x in values]
    n = len(v)
    if n == 0:
        return {"mean": None, "se": None, "ci95": None, "n": 0}
    est = mean_ci(v, bounds=bounds)
    m = est.score
    se = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1) / n) if n > 1 else 0.0
    return {"mean": m, "se": se, "ci95": [est.ci_low, est.ci_high], "n": n}
