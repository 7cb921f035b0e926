"""Intervals against known distributions: exact hand-computed cases, and coverage of the nominal 95% by
simulation (seeded, so the counts below are deterministic)."""
from __future__ import annotations

import math
import random

import pytest

from recipe.stats import Estimate, item_means, mean_ci, paired_bootstrap_delta


def test_mean_ci_hand_computed():
    # values 0,0,1,1: mean 0.5, sd (n-1) = sqrt(1/3) = 0.57735, se = 0.288675, half = 1.959964 * se = 0.565794
    e = mean_ci([0, 0, 1, 1], scale=100)
    assert e.n == 4 and e.score == pytest.approx(50.0)
    assert e.ci_low == pytest.approx(50 - 56.5794, abs=1e-3) and e.ci_high == pytest.approx(50 + 56.5794, abs=1e-3)
    clipped = mean_ci([0, 0, 1, 1], scale=100, bounds=(0, 100))
    assert (clipped.ci_low, clipped.ci_high) == (0, 100)
    assert mean_ci([0.3, 0.3, 0.3]).as_dict() == {"score": 0.3, "ci_low": 0.3, "ci_high": 0.3, "n": 3}
    with pytest.raises(ValueError, match="at least one"):
        mean_ci([])


def test_item_means_average_samples_of_one_item_first():
    rows = [{"item_id": "a", "reward": 1}, {"item_id": "a", "reward": 0}, {"item_id": "b", "reward": 1},
            {"item_id": "b", "reward": 1}]
    assert item_means(rows) == {"a": 0.5, "b": 1.0}


@pytest.mark.parametrize("p", [0.3, 0.6])
def test_mean_ci_covers_true_mean_about_95_percent(p):
    rng = random.Random(1)
    reps, n, hits = 1000, 150, 0
    for _ in range(reps):
        e = mean_ci([1.0 if rng.random() < p else 0.0 for _ in range(n)])
        hits += e.ci_low <= p <= e.ci_high
    # binomial sd of the coverage estimate at 95%: sqrt(.95*.05/1000) = 0.7 points; allow ~3 sd
    assert 0.925 <= hits / reps <= 0.975, hits


def test_paired_bootstrap_exact_shift_and_pairing():
    before = {str(i): float(i % 7) for i in range(50)}
    after = {k: v + 0.05 for k, v in before.items()}
    e = paired_bootstrap_delta(after, before, scale=100)
    # every paired difference is exactly 5 points: the interval collapses onto it, however large the item spread
    assert e.score == pytest.approx(5) and e.ci_low == pytest.approx(5) and e.ci_high == pytest.approx(5)
    assert e.n == 50 and e.excludes_zero()
    with pytest.raises(ValueError, match="share no scored items"):
        paired_bootstrap_delta({"a": 1.0}, {"b": 1.0})


def test_paired_bootstrap_interval_matches_normal_theory_and_covers():
    rng = random.Random(2)
    n, delta = 200, 0.1
    widths, hits, reps = [], 0, 200
    for r in range(reps):
        base = {str(i): rng.gauss(0, 1) for i in range(n)}
        after = {k: v + delta + rng.gauss(0, 0.5) for k, v in base.items()}  # paired noise sd 0.5
        e = paired_bootstrap_delta(after, base, n_boot=400, seed=r)
        hits += e.ci_low <= delta <= e.ci_high
        widths.append(e.ci_high - e.ci_low)
    # normal theory: width = 2 * 1.96 * 0.5 / sqrt(200) = 0.1386; the base sd (1.0) must not enter (pairing)
    assert sum(widths) / reps == pytest.approx(2 * 1.96 * 0.5 / math.sqrt(n), rel=0.08)
    assert 0.9 <= hits / reps <= 0.99, hits


def test_estimate_excludes_zero():
    assert not Estimate(1.0, -0.1, 2.0, 10).excludes_zero()
    assert Estimate(-1.0, -2.0, -0.5, 10).excludes_zero()
