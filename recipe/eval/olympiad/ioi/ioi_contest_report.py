"""IOI contest report: legal score, oracle upper bound, generations and submissions used, medal cut-offs.

Cut-offs are totals over a year's six tasks; only values with a source are filled in (EVAL.md §6: IOI 2025 gold
threshold 438.3). Others stay ``None`` (unknown here) and can be passed in explicitly.
"""
from __future__ import annotations

MEDAL_CUTOFFS: dict[int, dict[str, float | None]] = {
    2025: {"gold": 438.3, "silver": None, "bronze": None},  # EVAL.md §6 (IOI 2025 gold threshold)
    2024: {"gold": None, "silver": None, "bronze": None},  # not in the reference docs: supply them to compare
}


def medal_for(total: float, cutoffs: dict[str, float | None]) -> str | None:
    for medal in ("gold", "silver", "bronze"):
        c = cutoffs.get(medal)
        if c is not None and total >= c:
            return medal
    return None


def contest_report(tasks: dict[str, dict], year: int, cutoffs: dict[str, float | None] | None = None) -> dict:
    """``tasks``: name → {legal_score, oracle_score, generations, submissions, max_score}."""
    cut = cutoffs or MEDAL_CUTOFFS.get(year, {})
    legal = round(sum(t["legal_score"] for t in tasks.values()), 2)
    oracle = round(sum(t["oracle_score"] for t in tasks.values() if t.get("oracle_score") is not None), 2)
    return {
        "year": year, "tasks": tasks, "legal_score": legal,
        "oracle_upper_bound": oracle if all(t.get("oracle_score") is not None for t in tasks.values()) else None,
        "generations_used": sum(t.get("generations", 0) for t in tasks.values()),
        "submissions_used": sum(t.get("submissions", 0) for t in tasks.values()),
        "max_score": sum(t.get("max_score", 100) for t in tasks.values()),
        "medal_cutoffs": cut, "legal_medal": medal_for(legal, cut),
        "margin_to_gold": None if cut.get("gold") is None else round(legal - cut["gold"], 2),
        "complete_contest": len(tasks) == 6,
    }
