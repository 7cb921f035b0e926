"""Generations → legal submissions → IOI task result (EVAL.md §5–6), with every number reported separately.

``run_task``: each generation's last C++ block is a candidate (target subtask optional); candidates are judged on
the public sample subtasks only (compiled once per candidate for that); ``LegalSelector`` submits at most
``cap`` of them through ``SubmissionBudget`` (the only path to hidden results); optionally every candidate is
also judged on the hidden tests for the oracle upper bound (never used by the selection).
"""
from __future__ import annotations

from recipe.eval.olympiad.ioi.ioi_judge import IOIJudge
from recipe.eval.olympiad.ioi.selection import (MAX_SUBMISSIONS, Candidate, LegalSelector, SubmissionBudget,
                                               legal_score, oracle_score)


def run_task(judge: IOIJudge, candidates: list[Candidate], *, cap: int = MAX_SUBMISSIONS, oracle: bool = False) -> dict:
    pkg = judge.pkg
    public = {c.name: judge.evaluate(c.source, c.name, public_only=True) for c in candidates}
    budget = SubmissionBudget(lambda c: judge.evaluate(c.source, c.name), cap=cap)
    submitted = LegalSelector(pkg.subtasks).run(candidates, public, budget)
    score, best = legal_score(budget, pkg.subtasks, pkg.score_precision)
    out = {"task": pkg.code, "max_score": pkg.max_score, "legal_score": score, "best_per_subtask": best,
           "generations": len(candidates), "submissions": budget.used, "cap": cap, "submitted": submitted,
           "passed_public": sum(1 for r in public.values() if r.compiled and all(t.score >= 1 for t in r.tests.values())),
           "submission_results": [r.to_dict() for r in budget.results], "oracle_score": None}
    if oracle:
        done = {r.name: r for r in budget.results}
        full = [done.get(c.name) or judge.evaluate(c.source, c.name) for c in candidates]
        out["oracle_score"] = oracle_score(full, pkg.subtasks, pkg.score_precision)
    return out
