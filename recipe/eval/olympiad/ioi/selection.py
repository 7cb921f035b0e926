"""Which generations become IOI submissions (EVAL.md §5–6): at most 50 per task, never chosen by hidden tests.

``LegalSelector`` sees only legal signals: the public (sample-subtask) results of every candidate, its declared
target subtask and its length, plus the official per-subtask feedback of submissions already counted (IOI is
full-feedback). It never receives hidden-test results of an uncounted candidate: the only way to learn them is
``SubmissionBudget.submit``, which counts the submission and refuses the 51st.
Policy (after the HF ``selection_simulator.py`` reference): drop candidates that fail to compile or fail a public
test; order by public score (desc), then length (asc); go round-robin over target subtasks; skip a candidate whose
target subtask is already at full points by counted feedback; stop at the cap or when every subtask is full.
``oracle_score`` (best per subtask over *all* candidates on hidden tests) is an upper bound, never a legal score.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from recipe.eval.olympiad.ioi.ioi_judge import SubmissionResult
from recipe.eval.olympiad.ioi.ioi_package import Subtask
from recipe.eval.olympiad.ioi.ioi_scoring import best_per_subtask, task_score

MAX_SUBMISSIONS = 50  # per task (IOI rules, EVAL.md §6)


class SubmissionCapReached(RuntimeError):
    pass


@dataclass
class Candidate:
    name: str
    source: str | None
    target_subtask: str | None = None
    length: int | None = None  # e.g. tokens of the generation (CoT length); defaults to the source length


class SubmissionBudget:
    """The contest system: evaluates a submission on every test and counts it; at most ``cap`` per task."""

    def __init__(self, evaluate: Callable[[Candidate], SubmissionResult], cap: int = MAX_SUBMISSIONS):
        if not 1 <= cap <= MAX_SUBMISSIONS:
            raise ValueError(f"cap must be in [1, {MAX_SUBMISSIONS}] (IOI allows {MAX_SUBMISSIONS} per task), got {cap}")
        self._evaluate = evaluate
        self.cap = cap
        self.results: list[SubmissionResult] = []

    @property
    def used(self) -> int:
        return len(self.results)

    def submit(self, cand: Candidate) -> dict[str, float]:
        """Count one submission; return its official per-subtask scores (the feedback a contestant sees)."""
        if self.used >= self.cap:
            raise SubmissionCapReached(f"submission {self.used + 1} exceeds the cap of {self.cap} per task")
        res = self._evaluate(cand)
        self.results.append(res)
        return res.subtask_scores()


class LegalSelector:
    def __init__(self, subtasks: list[Subtask]):
        self.subtasks = subtasks
        self.points = {s.name: s.points for s in subtasks}

    def order(self, candidates: list[Candidate], public: dict[str, SubmissionResult]) -> list[Candidate]:
        """Candidates that compile and pass every public test, in submission order (round-robin by target)."""
        def public_score(c: Candidate) -> float:
            r = public[c.name]
            if not r.compiled:
                return -1.0
            return sum(t.score for t in r.tests.values()) / max(1, len(r.tests))

        ok = [c for c in candidates if public_score(c) >= 1.0 or (public[c.name].compiled and not public[c.name].tests)]
        ok.sort(key=lambda c: (-public_score(c), c.length if c.length is not None else len(c.source or "")))
        groups: OrderedDict[str, list[Candidate]] = OrderedDict()
        for c in ok:
            groups.setdefault(c.target_subtask or "*", []).append(c)
        ordered = []
        while any(groups.values()):
            for g in groups.values():
                if g:
                    ordered.append(g.pop(0))
        return ordered

    def run(self, candidates: list[Candidate], public: dict[str, SubmissionResult], budget: SubmissionBudget) -> list[str]:
        """Submit in order until the cap or until all subtasks are full; returns the submitted names."""
        best = {s.name: 0.0 for s in self.subtasks}
        submitted = []
        for c in self.order(candidates, public):
            if budget.used >= budget.cap or all(best[k] >= p for k, p in self.points.items()):
                break
            if c.target_subtask in best and best[c.target_subtask] >= self.points[c.target_subtask]:
                continue  # its target is already solved (known from counted feedback)
            feedback = budget.submit(c)
            submitted.append(c.name)
            for k, v in feedback.items():
                best[k] = max(best.get(k, 0.0), v)
        return submitted


def oracle_score(full_results: list[SubmissionResult], subtasks: list[Subtask], precision: int = 2) -> float:
    """Upper bound: best per subtask over every candidate's hidden-test results (NeMo-Skills ``total_score``)."""
    return task_score([r.subtask_scores() for r in full_results], subtasks, precision)


def legal_score(budget: SubmissionBudget, subtasks: list[Subtask], precision: int = 2) -> tuple[float, dict[str, float]]:
    scores = [r.subtask_scores() for r in budget.results]
    return task_score(scores, subtasks, precision), best_per_subtask(scores, subtasks)
