"""IOI scoring arithmetic (EVAL.md §6), independent of how tests were run.

- A test scores in [0, 1] (1 = OK, fractions = partial from a checker/manager, 0 = any failure).
- Subtask score of one submission = min over the subtask's tests × points, rounded to ``score_precision``.
- Subtask status = its worst test status, in the order CE < RE < WA < MLE < TLE < PA < OK (EVAL.md §6).
- Task score = Σ over subtasks of the max over submissions (best submission per subtask), not the best total.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from recipe.eval.olympiad.ioi.ioi_package import Subtask

STATUS_ORDER = ("CE", "RE", "WA", "MLE", "TLE", "PA", "OK")  # worst first


def worst_status(statuses: Iterable[str]) -> str:
    statuses = list(statuses)
    if not statuses:
        raise ValueError("no test statuses")
    return min(statuses, key=STATUS_ORDER.index)


def subtask_score(test_scores: Iterable[float], points: float, precision: int = 2) -> float:
    scores = list(test_scores)
    if not scores:
        raise ValueError("a subtask needs at least one test score")
    if any(not 0.0 <= s <= 1.0 for s in scores):
        raise ValueError(f"test scores must lie in [0, 1], got {scores}")
    return round(min(scores) * points, precision)


def submission_subtask_scores(subtasks: list[Subtask], test_scores: Mapping[str, float], precision: int = 2) -> dict[str, float]:
    """Per-subtask score of one submission from its per-test scores.

    A test may be missing only when the subtask already has a 0 (evaluation stopped at the first 0-score test);
    any other missing test is an error, never a silent pass.
    """
    out = {}
    for st in subtasks:
        got = [test_scores[t] for t in st.tests if t in test_scores]
        if len(got) < len(st.tests) and (not got or min(got) > 0):
            missing = [t for t in st.tests if t not in test_scores]
            raise ValueError(f"subtask {st.name}: no score for tests {missing[:5]} and no 0 among the others")
        out[st.name] = subtask_score(got, st.points, precision)
    return out


def task_score(per_submission: Iterable[Mapping[str, float]], subtasks: list[Subtask], precision: int = 2) -> float:
    """Σ over subtasks of the best score any submission got on it (0 with no submissions)."""
    subs = list(per_submission)
    best = {st.name: max((s.get(st.name, 0.0) for s in subs), default=0.0) for st in subtasks}
    return round(sum(best.values()), precision)


def best_per_subtask(per_submission: Iterable[Mapping[str, float]], subtasks: list[Subtask]) -> dict[str, float]:
    subs = list(per_submission)
    return {st.name: max((s.get(st.name, 0.0) for s in subs), default=0.0) for st in subtasks}
