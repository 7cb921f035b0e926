"""Submission policy for ICPC from many generations per problem (EVAL.md §5: generate → filter → submit).

Per problem, candidates are taken in generation order; with ``require_samples`` a candidate that fails the sample
data (public: in the statement) is never submitted. Each submitted candidate is judged on all data; the problem
stops at the first AC or after ``max_submissions_per_problem``. Simulated clock: a candidate's ``minute`` when the
generator recorded one, else the n-th submission of a problem happens at n × ``minutes_per_submission``.
The judge runs the samples first and stops there when one fails, so a filtered candidate never touches secret data;
one compilation per candidate."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from recipe.eval.olympiad.icpc.icpc_judge import Judgement
from recipe.eval.olympiad.icpc.icpc_standings import Run, standings


@dataclass
class ICPCCandidate:
    problem: str
    name: str
    source: str | None
    minute: float | None = None


def simulate_contest(candidates: list[ICPCCandidate], judge_for: Callable[[str], object], *, max_submissions_per_problem: int = 10,
                     minutes_per_submission: float = 1.0, require_samples: bool = True, penalty_minutes: int = 20,
                     compile_error_penalty: bool = False) -> dict:
    runs: list[Run] = []
    log = []
    problems = sorted({c.problem for c in candidates})
    filtered = {p: 0 for p in problems}
    for p in problems:
        judge = judge_for(p)
        submitted = 0
        for c in (c for c in candidates if c.problem == p):
            if submitted >= max_submissions_per_problem:
                break
            j: Judgement = judge.judge(c.source, samples_only=False)
            if require_samples and not j.samples_passed:  # failed public data: never submitted
                filtered[p] += 1
                log.append({"problem": p, "candidate": c.name, "submitted": False, "sample_verdict": j.verdict})
                continue
            submitted += 1
            minute = c.minute if c.minute is not None else submitted * minutes_per_submission
            runs.append(Run(p, minute, j.verdict))
            log.append({"problem": p, "candidate": c.name, "submitted": True, "minute": minute} | j.to_dict())
            if j.verdict == "AC":
                break
    res = standings(runs, penalty_minutes=penalty_minutes, compile_error_penalty=compile_error_penalty, problems=problems)
    return res | {"generations_used": len(candidates), "filtered_by_samples": filtered, "log": log}
