"""Mean ± standard error over items (each item's score already averaged over its k samples)."""
from __future__ import annotations

import math
from typing import Iterable


def mean_se(values: Iterable[float]) -> dict:
    """{"mean", "se", "ci95": [lo, hi], "n"}: SE = sample std / sqrt(n) (0 for n = 1; None for n = 0)."""
    v = [float(x) for x in values]
    n = len(v)
    if n == 0:
        return {"mean": None, "se": None, "ci95": None, "n": 0}
    m = sum(v) / n
    se = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1) / n) if n > 1 else 0.0
    return {"mean": m, "se": se, "ci95": [m - 1.96 * se, m + 1.96 * se], "n": n}
