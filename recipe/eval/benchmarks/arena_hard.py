"""ArenaHard v2 (``arena_hard_v2``): pairwise LLM judge against each category's baseline, judged in both positions,
scored as arena-hard-auto scores it (``arena_hard_judge``: its judge prompts per category, strong verdicts weighted 3,
null judgments dropped, a win rate per category with its bootstrap interval) and the paper's headline, the mean of the
hard-prompt and creative-writing win rates (EVAL.md §2: GPT-4.1 judge, no style control, thinking, T 0.6 / top-p 0.95).

Per row (``uid``, ``category``, ``prompt``) the judge sees the category's system prompt and the v2 template twice:
baseline as A / ours as B, then ours as A / baseline as B. An empty answer (reasoning never closed, or nothing
visible) is a strong loss in both games without a judge call. Baselines: o3-mini for ``hard_prompt``,
gemini-2.0-flash-001 for ``creative_writing`` (``benchmarks.suites.arena_hard_v2.baselines``, one answer file per
category); ``recipe eval`` leaves out, before generation, the rows of a category whose baseline answers it could not
load, and says so in the summary.

Judge: ``configure(judge=fn, judge_name=..., baselines={uid: answer})`` where ``fn(system, user) -> judge text``;
``api.evaluate`` wires an OpenAI-compatible judge endpoint. Rows may carry ``baseline_answer`` themselves.
"""
from __future__ import annotations

from statistics import mean
from typing import Any, Callable

from recipe.eval.benchmarks.arena_hard_judge import (CATEGORIES, LOSS_BOTH_STRONG, TEMPLATE, battles, parse_label,
                                                     win_rates)
from recipe.eval.benchmarks.suite_registry import RowError, Suite, get_suite, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.rewards.extract import BadResponse, parse_response


class JudgeNotConfigured(ValueError):
    """ArenaHard was asked to score without a judge (a setup error, reported once, not per row)."""


_STATE: dict[str, Any] = {"judge": None, "judge_name": None, "baselines": {}}


def configure(*, judge: Callable[[str, str], str] | None = None, judge_name: str | None = None,
              baselines: dict[str, str] | None = None) -> None:
    if judge is not None:
        _STATE["judge"], _STATE["judge_name"] = judge, judge_name or getattr(judge, "__name__", "judge")
        get_suite("arena_hard_v2").judge = _STATE["judge_name"]
    if baselines is not None:
        _STATE["baselines"] = dict(baselines)


def baselines_from_answer_rows(rows: list[dict]) -> dict[str, str]:
    """arena-hard-auto ``model_answer`` rows -> {uid: final answer text}."""
    out = {}
    for r in rows:
        msg = next((m for m in reversed(r.get("messages", [])) if m.get("role") == "assistant"), None)
        if msg is not None:
            c = msg["content"]
            out[str(r["uid"])] = c["answer"] if isinstance(c, dict) else str(c)
    return out


def score_arena(row: dict, response: Any, thinking: bool) -> dict:
    judge = _STATE["judge"]
    if judge is None:
        raise JudgeNotConfigured("arena_hard_v2 needs a judge: --judge-endpoint and --judge-model "
                                 "(or arena_hard.configure(judge=...))")
    cat = row["category"]
    if cat not in CATEGORIES:
        raise RowError(f"unknown category {cat!r}; arena-hard-auto judges {', '.join(CATEGORIES)}")
    system, baseline_model = CATEGORIES[cat]
    base = row.get("baseline_answer") or _STATE["baselines"].get(str(row["uid"]))
    if not base:
        raise RowError(f"no baseline answer for uid {row['uid']} (category {cat}: {baseline_model}'s answers): "
                       "give baseline_answer, or that model's answer file")
    try:
        parsed = parse_response(response, "thinking" if thinking else None)
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None or not parsed.answer.strip():
        return {"score": 0.0, "no_answer": True, "reason": "no_answer", "category": cat, "games": [None, None],
                "battles": list(LOSS_BOTH_STRONG)}
    labels = []
    for ours_first in (False, True):
        a, b = (parsed.answer, base) if ours_first else (base, parsed.answer)
        labels.append(parse_label(judge(system, TEMPLATE.format(question=row["prompt"], a=a, b=b))))
    got = battles(*labels)
    if got is None:  # dropped from the win rate, as arena-hard-auto drops a null judgment
        return {"score": 0.0, "no_answer": False, "reason": "null_judgment", "category": cat, "games": labels,
                "battles": None}
    s = mean(got)
    return {"score": s, "no_answer": False, "reason": "win" if s > 0.5 else ("tie" if s == 0.5 else "loss"),
            "category": cat, "games": labels, "battles": got}


def summarize_arena(verdicts: dict[str, list[dict]]) -> dict:
    """The paper's headline (mean of the two subsets) as the suite's score, each subset with its interval."""
    flat = [v for vs in verdicts.values() for v in vs]
    rates = win_rates(flat)
    head = rates["headline"]
    out = {"win_rate_by_category": rates["subsets"], "headline": head, "judge": _STATE["judge_name"],
           "null_judgments": sum(1 for v in flat if v.get("battles") is None and not v.get("no_answer"))}
    if head is not None:
        out.update(score=head["win_rate"], stderr=head["stderr_bootstrap"], ci95=None,
                   ci90_bootstrap=head["ci90_bootstrap"],
                   score_note="mean of the hard_prompt and creative_writing win rates (arena-hard-auto battles)")
    else:
        out.update(score=None, stderr=None, ci95=None,
                   score_note="no headline: it needs both hard_prompt and creative_writing (see win_rate_by_category)")
    return out


def rows_with_baselines(rows: list[dict]) -> tuple[list[dict], dict]:
    """The rows whose baseline answer is known, and per left-out category why (before any generation)."""
    known = _STATE["baselines"]
    keep = [r for r in rows if r.get("baseline_answer") or str(r.get("uid")) in known]
    left: dict[str, int] = {}
    for r in rows:
        if not (r.get("baseline_answer") or str(r.get("uid")) in known):
            left[r.get("category")] = left.get(r.get("category"), 0) + 1
    return keep, {c: f"{n} rows left out: no baseline answers ({CATEGORIES.get(c, (None, '?'))[1]})"
                  for c, n in left.items()}


register_suite(Suite(
    name="arena_hard_v2",
    description="ArenaHard v2.0: pairwise judge vs each category's baseline, arena-hard-auto weights, "
                "hard/creative mean",
    id_field="uid", required_fields=("category", "prompt"),
    messages=lambda row, thinking: [{"role": "user", "content": row["prompt"]}],
    score=score_arena, summarize=summarize_arena, metric="win rate vs baseline", judge="gpt-4.1",
    defaults=SamplingParams(temperature=0.6, top_p=0.95, max_tokens=32768, thinking=True, k=1),
    scorer_version="arena-hard-auto-v2-2"))
