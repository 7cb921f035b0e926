"""ArenaHard v2 (``arena_hard_v2``): pairwise LLM judge against the baseline's answers, judged in both positions,
win rate with a bootstrap CI (EVAL.md §2: GPT-4.1 judge, no style control, thinking, T 0.6 / top-p 0.95).

Per row (``uid``, ``category``, ``prompt``) the judge sees the prompt and two answers in arena-hard-auto's template
twice: baseline as A / ours as B, then ours as A / baseline as B. The verdict label is parsed with the v2 config's
regexes (``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``); per game ours scores 1 (better), 0.5 (tie)
or 0 (worse), strong and weak verdicts alike; a game without a parseable verdict is dropped (counted in
``unparsed_games``). An item's score is the mean of its valid games; the win rate is the mean over items, with a
percentile bootstrap CI over items (1000 resamples, seeded). Simplification vs upstream: no Bradley-Terry fit and
no style control (the paper used none). Baselines: o3-mini for ``hard_prompt``; the ``creative_writing`` baseline
(gemini-2.0-flash-001) is not in the fixtures, so those rows need ``baseline_answer`` supplied.

Judge: ``configure(judge=fn, judge_name=..., baselines={uid: answer})`` where ``fn(system, user) -> judge text``;
``api.evaluate`` wires an OpenAI-compatible judge endpoint. Rows may carry ``baseline_answer`` themselves.
"""
from __future__ import annotations

import re
from statistics import mean
from typing import Any, Callable

from recipe.eval.benchmarks.registry import RowError, Suite, get_suite, register_suite
from recipe.eval.metrics import bootstrap_ci
from recipe.eval.sampling import SamplingParams
from recipe.rewards.extract import BadResponse, parse_response

TEMPLATE = ("<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{a}\n<|The End of Assistant A's "
            "Answer|>\n\n<|The Start of Assistant B's Answer|>\n{b}\n<|The End of Assistant B's Answer|>")
SYSTEM = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
          "to the user prompt displayed below. Compare them for helpfulness, relevance, accuracy and conciseness. "
          "Output your final verdict as one of: [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]].")
_PATTERNS = (re.compile(r"\[\[([AB<>=]+)\]\]"), re.compile(r"\[([AB<>=]+)\]"))
_A_WINS, _B_WINS, _TIE = {"A>>B", "A>B", "B<A", "B<<A"}, {"B>>A", "B>A", "A<B", "A<<B"}, {"A=B", "B=A"}

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


def parse_verdict(text: str) -> str | None:
    """'ours_first'-independent label: 'A', 'B', 'tie', or None when no verdict label is found (last match wins)."""
    for pat in _PATTERNS:
        labels = [m for m in pat.findall(text or "") if m]
        if labels:
            lab = labels[-1]
            if lab in _A_WINS:
                return "A"
            if lab in _B_WINS:
                return "B"
            if lab in _TIE:
                return "tie"
    return None


def score_arena(row: dict, response: Any, thinking: bool) -> dict:
    judge = _STATE["judge"]
    if judge is None:
        raise JudgeNotConfigured("arena_hard_v2 needs a judge: --judge-endpoint and --judge-model "
                                 "(or arena_hard.configure(judge=...))")
    base = row.get("baseline_answer") or _STATE["baselines"].get(str(row["uid"]))
    if not base:
        raise RowError(f"no baseline answer for uid {row['uid']} (category {row.get('category')}): give baseline_answer")
    try:
        parsed = parse_response(response, "thinking" if thinking else None)
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None or not parsed.answer.strip():
        return {"score": 0.0, "no_answer": True, "reason": "no_answer", "games": [0.0, 0.0], "unparsed_games": 0}
    ours = parsed.answer
    games, unparsed = [], 0
    for ours_first in (False, True):
        a, b = (ours, base) if ours_first else (base, ours)
        v = parse_verdict(judge(SYSTEM, TEMPLATE.format(question=row["prompt"], a=a, b=b)))
        if v is None:
            unparsed += 1
            continue
        games.append(0.5 if v == "tie" else float((v == "A") == ours_first))
    if not games:
        return {"score": 0.5, "no_answer": False, "reason": "judge_unparsed", "games": [], "unparsed_games": unparsed}
    s = mean(games)
    return {"score": s, "no_answer": False, "reason": "win" if s > 0.5 else ("tie" if s == 0.5 else "loss"),
            "games": games, "unparsed_games": unparsed}


def summarize_arena(verdicts: dict[str, list[dict]]) -> dict:
    item_scores = [mean(v["score"] for v in vs) for vs in verdicts.values()]
    lo, hi = bootstrap_ci(item_scores, n_boot=1000, seed=0)
    flat = [v for vs in verdicts.values() for v in vs]
    return {"win_rate": round(100 * mean(item_scores), 4), "win_rate_ci95_bootstrap": [round(100 * lo, 4), round(100 * hi, 4)],
            "unparsed_games": sum(v.get("unparsed_games", 0) for v in flat), "judge": _STATE["judge_name"]}


register_suite(Suite(
    name="arena_hard_v2", description="ArenaHard v2.0: pairwise judge vs baseline, both positions, win rate + bootstrap CI",
    id_field="uid", required_fields=("prompt",),
    messages=lambda row, thinking: [{"role": "user", "content": row["prompt"]}],
    score=score_arena, summarize=summarize_arena, metric="win rate vs baseline", judge="gpt-4.1",
    defaults=SamplingParams(temperature=0.6, top_p=0.95, max_tokens=32768, thinking=True, k=1),
    scorer_version="arena-hard-v2-pairwise-1"))
