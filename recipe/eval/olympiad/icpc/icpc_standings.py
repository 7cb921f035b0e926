"""ICPC standings arithmetic (EVAL.md §7): problems solved; penalty = Σ over solved problems of (minutes to the
first accepted run + ``penalty_minutes`` × rejected runs before it); unsolved problems add nothing; runs after the
first accepted one are ignored; compile errors count as rejections only if ``compile_error_penalty``; a judge
error (JE) never counts. Solved, submissions per problem and penalty are reported as separate numbers."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    problem: str
    minute: float
    verdict: str  # AC, WA, TLE, MLE, RTE, CE, JE


def standings(runs: list[Run], *, penalty_minutes: int = 20, compile_error_penalty: bool = False,
              problems: list[str] | None = None) -> dict:
    per: dict[str, dict] = {p: {"solved": False, "submissions": 0, "rejected_before_ac": 0, "accepted_minute": None,
                                "penalty": 0} for p in (problems or [])}
    for r in sorted(runs, key=lambda r: r.minute):
        st = per.setdefault(r.problem, {"solved": False, "submissions": 0, "rejected_before_ac": 0,
                                        "accepted_minute": None, "penalty": 0})
        if st["solved"]:
            continue
        st["submissions"] += 1
        if r.verdict == "AC":
            st["solved"] = True
            st["accepted_minute"] = int(r.minute)  # contest time counts whole minutes
            st["penalty"] = int(r.minute) + penalty_minutes * st["rejected_before_ac"]
        elif r.verdict == "JE" or (r.verdict == "CE" and not compile_error_penalty):
            continue
        else:
            st["rejected_before_ac"] += 1
    return {"solved": sum(s["solved"] for s in per.values()), "penalty_minutes": sum(s["penalty"] for s in per.values()),
            "submissions_per_problem": {p: s["submissions"] for p, s in sorted(per.items())},
            "total_submissions": sum(s["submissions"] for s in per.values()), "problems": dict(sorted(per.items()))}
