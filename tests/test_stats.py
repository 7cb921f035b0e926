"""Intervals against known distributions: exact hand-computed cases, and coverage of the nominal 95% by
simulation (seeded, so the counts below are deterministic)."""
from __future__ import annotations

import math
import random

import pytest

from recipe.stats import Estimate, average_ci, item_means, mean_ci, paired_bootstrap_delta, percentile_interval


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


def test_percentile_interval_is_symmetric():
    """As many resampled statistics below the lower end as above the upper end: of 1,000, indices 25 and 974."""
    xs = list(range(1000))
    assert percentile_interval(xs, 0.95) == (25, 974)
    assert percentile_interval(list(range(2000)), 0.95) == (50, 1949)
    assert percentile_interval([3.0], 0.95) == (3.0, 3.0)


def test_eval_bootstrap_ci_uses_the_symmetric_percentiles():
    from recipe.eval.metrics import bootstrap_ci
    counter = iter(range(1000))  # a "statistic" that returns 0, 1, ..., 999: the sorted resamples are 0..999

    def stat(_sample):
        return next(counter)
    assert bootstrap_ci([1.0, 2.0], stat=stat, n_boot=1000) == [25, 974]


@pytest.mark.parametrize("values", [[1.0] + [0.0] * 19, [0.0] + [1.0] * 19])
def test_average_ci_reads_the_se_of_an_interval_clipped_near_0_and_100(values):
    """5% (or 95%) of 20 items: the normal interval crosses 0 (100) and is clipped; the average of that one score
    must keep its true standard error, not a third less read from the clipped width."""
    e = mean_ci(values, scale=100.0, bounds=(0.0, 100.0))
    unclipped = mean_ci(values, scale=100.0)
    assert (e.ci_low, e.ci_high) != (unclipped.ci_low, unclipped.ci_high)  # it was clipped
    avg = average_ci([e])
    assert avg.ci_low == pytest.approx(unclipped.ci_low) and avg.ci_high == pytest.approx(unclipped.ci_high)
    two = average_ci([e, unclipped])  # se = sqrt(2) se_1 / 2
    half = (unclipped.ci_high - unclipped.ci_low) / 2
    assert two.ci_high - two.score == pytest.approx(half / math.sqrt(2))
