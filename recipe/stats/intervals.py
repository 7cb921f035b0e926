"""Confidence intervals, one convention for the whole project.

- A score is a mean over *items* (prompts). With k samples per item (avg@k) the k rewards of one item are
  correlated, so they are first averaged per item (``item_means``) and the interval is taken over items: ``n`` is
  the number of items, never the number of responses.
- ``mean_ci``: the normal interval mean +- z * sd / sqrt(n) (sd with n-1), clipped to the value range when one is
  given. For 0/1 rewards this is the Wald interval; with n >= 100 items per domain its coverage is close to the
  nominal 95% away from 0 and 100 (tests/test_stats.py checks coverage by simulation).
- ``paired_bootstrap_delta``: the delta between two checkpoints scored on the same items (validation draws the
  same prompts and the same random numbers for every checkpoint), resampling items jointly so the pairing
  removes the between-item variance. Percentile interval over ``n_boot`` resamples, seeded.

Every result is an ``Estimate`` with ``score``, ``ci_low``, ``ci_high``, ``n`` (``as_dict`` gives the JSON shape
used in validation.json, teachers.json and ``recipe report --json``).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Estimate:
    score: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self, ndigits: int = 2) -> dict:
        return {k: (round(v, ndigits) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def excludes_zero(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def item_means(rows: Iterable[dict], key: str = "item_id", value: str = "reward") -> dict[str, float]:
    """Mean ``value`` per item over its samples (rows as in the per-sample JSONL)."""
    acc: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        acc[str(r[key])].append(float(r[value]))
    return {k: sum(v) / len(v) for k, v in acc.items()}


def mean_ci(values: Sequence[float], level: float = 0.95, *, scale: float = 1.0,
            bounds: tuple[float, float] | None = None) -> Estimate:
    """Mean of per-item values with a normal ``level`` interval; ``scale`` multiplies everything (e.g. 100 for %),
    ``bounds`` (after scaling) clips the interval."""
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci needs at least one value (no items were scored)")
    m = sum(values) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
    half = _z(level) * sd / math.sqrt(n)
    lo, hi = (m - half) * scale, (m + half) * scale
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return Estimate(m * scale, lo, hi, n)


def paired_bootstrap_delta(after: dict[str, float], before: dict[str, float], level: float = 0.95, *,
                           n_boot: int = 2000, seed: int = 0, scale: float = 1.0) -> Estimate:
    """mean(after - before) over the items both dicts score, with a paired percentile bootstrap interval."""
    keys = sorted(set(after) & set(before))
    if not keys:
        raise ValueError("paired_bootstrap_delta: the two checkpoints share no scored items")
    diffs = [after[k] - before[k] for k in keys]
    n = len(diffs)
    import torch  # here, not at import: `recipe run` reads reports without loading torch
    g = torch.Generator().manual_seed(seed)
    d = torch.tensor(diffs, dtype=torch.float64)
    boots = d[torch.randint(n, (n_boot, n), generator=g)].mean(1).sort().values.tolist()
    lo, hi = percentile_interval(boots, level)
    return Estimate(sum(diffs) / n * scale, lo * scale, hi * scale, n)


def percentile_interval(sorted_values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of ``level`` over sorted resampled statistics, symmetric: as many values below the
    lower end as above the upper end (k = floor(n * (1 - level) / 2): of 1,000, indices 25 and 974)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("percentile_interval needs at least one value")
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    k = min((n - 1) // 2, int(math.floor(n * (1 - level) / 2 + 1e-9)))
    return sorted_values[k], sorted_values[n - 1 - k]


def average_ci(estimates: Sequence[Estimate], level: float = 0.95) -> Estimate:
    """The plain average of several scores (e.g. a checkpoint's domains), its interval from the per-score standard
    errors assuming independent samples: se = sqrt(sum se_i^2) / D. Each se_i is read from the wider half of its
    interval: ``mean_ci``'s intervals are symmetric before clipping, and one clipped at 0 or 100 keeps its other
    half whole (the full width of a clipped interval understates the se near the ends)."""
    if not estimates:
        raise ValueError("average_ci needs at least one estimate")
    z = _z(level)
    D = len(estimates)
    m = sum(e.score for e in estimates) / D
    se = math.sqrt(sum((max(e.score - e.ci_low, e.ci_high - e.score) / z) ** 2 for e in estimates)) / D
    return Estimate(m, m - z * se, m + z * se, sum(e.n for e in estimates))
