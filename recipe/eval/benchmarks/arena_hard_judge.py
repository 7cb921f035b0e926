"""ArenaHard v2 judging and scoring as arena-hard-auto does it (lmarena/arena-hard-auto; facts, not its code).

- Judge system prompt per category (``utils/judge_utils.py``, ``JUDGE_SETTINGS``): ``hard_prompt`` (and its
  ``coding`` / ``math`` subcategories) use the original Arena-Hard prompt, which has the judge write its own answer
  first and compare both answers with it; ``creative_writing`` uses the same prompt without that step. The user turn is
  the v2 config's template (``config/arena-hard-v2.0.yaml``). Baselines: o3-mini-2025-01-31 for hard prompts,
  gemini-2.0-flash-001 for creative writing.
- Two games per answer (``gen_judgment.py``): baseline as A / ours as B, then ours as A / baseline as B; the verdict is
  the last match, in the upper-cased judgment, of the first of the config's regexes that matches.
- Weights (``show_result.py``, ``load_judgments``): a strong verdict (``>>``) counts as 3 battles, a weak one or a tie
  as 1 (tie 0.5); a pair in which either game has no verdict is dropped (a null judgment, counted), never scored 0.5.
- Score per category: the mean over all battles; interval: 5th-95th percentile of bootstrap means over battles
  (upstream 100 resamples; 1000 here, seeded). The paper's headline is the mean of the two categories (hard 88.2,
  creative 78.7, 83.5), here with the interval of the same mean over paired bootstrap replicates.
"""
from __future__ import annotations

import random
import re
from statistics import mean, pstdev

_INTRO = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants to "
          "the user prompt displayed below. You will be given assistant A's answer and assistant B's answer. Your job "
          "is to evaluate which assistant's answer is better.\n\n")
_OWN_ANSWER = ("Begin your evaluation by generating your own answer to the prompt. You must provide your answers "
               "before judging any answers.\n\n")
_COMPARE = ("When evaluating the assistants' answers, compare both assistants' answers{with_own}. You must identify "
            "and correct any mistakes or inaccurate information.\n\n")
_CRITERIA = ("Then consider if the assistant's answers are helpful, relevant, and concise. Helpful means the answer "
             "correctly responds to the prompt or follows the instructions. Note when user prompt has any ambiguity or "
             "more than one interpretation, it is more helpful and appropriate to ask for clarifications or more "
             "information from the user than providing an answer based on assumptions. Relevant means all parts of the "
             "response closely connect or are appropriate to what is being asked. Concise means the response is clear "
             "and not verbose or excessive.\n\nThen consider the creativity and novelty of the assistant's answers "
             "when needed. Finally, identify any missing important information in the assistants' answers that would "
             "be beneficial to include when responding to the user prompt.\n\n")
_VERDICT = ("After providing your explanation, you must output only one of the following choices as your final verdict "
            "with a label:\n\n1. Assistant A is significantly better: [[A>>B]]\n2. Assistant A is slightly better: "
            "[[A>B]]\n3. Tie, relatively the same: [[A=B]]\n4. Assistant B is slightly better: [[B>A]]\n5. Assistant B "
            "is significantly better: [[B>>A]]\n\nExample output: \"My final verdict is tie: [[A=B]]\".")
HARD_PROMPT_SYSTEM = _INTRO + _OWN_ANSWER + _COMPARE.format(with_own=" with your answer") + _CRITERIA + _VERDICT
CREATIVE_SYSTEM = _INTRO + _COMPARE.format(with_own="") + _CRITERIA + _VERDICT
TEMPLATE = ("<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{a}\n<|The End of Assistant A's "
            "Answer|>\n\n<|The Start of Assistant B's Answer|>\n{b}\n<|The End of Assistant B's Answer|>")
# category -> (judge system prompt, baseline model)
CATEGORIES = {"hard_prompt": (HARD_PROMPT_SYSTEM, "o3-mini-2025-01-31"),
              "coding": (HARD_PROMPT_SYSTEM, "o3-mini-2025-01-31"),
              "math": (HARD_PROMPT_SYSTEM, "o3-mini-2025-01-31"),
              "creative_writing": (CREATIVE_SYSTEM, "gemini-2.0-flash-001")}
HEADLINE = ("hard_prompt", "creative_writing")  # the paper's average (Table 1)
STRONG_WEIGHT = 3
_PATTERNS = (re.compile(r"\[\[([AB<>=]+)\]\]"), re.compile(r"\[([AB<>=]+)\]"))
# the score of assistant A for each label, one entry per battle
_A_SCORE = {"A>B": [1.0], "A>>B": [1.0] * STRONG_WEIGHT, "A=B": [0.5], "A<<B": [0.0] * STRONG_WEIGHT, "A<B": [0.0],
            "B>A": [0.0], "B>>A": [0.0] * STRONG_WEIGHT, "B=A": [0.5], "B<<A": [1.0] * STRONG_WEIGHT, "B<A": [1.0]}


def parse_label(judgment: str) -> str | None:
    """The verdict label, or None when no regex matches or the label is not one of the ten known ones."""
    text = (judgment or "").upper()
    for pat in _PATTERNS:
        found = [m for m in pat.findall(text) if m]
        if found:
            label = found[-1].strip("\n")
            return label if label in _A_SCORE else None
    return None


def battles(label_base_first: str | None, label_ours_first: str | None) -> list[float] | None:
    """Our battle scores from the two games (baseline as A, then ours as A); None when either has no verdict."""
    if label_base_first is None or label_ours_first is None:
        return None
    return _A_SCORE[label_ours_first] + [1.0 - s for s in _A_SCORE[label_base_first]]


LOSS_BOTH_STRONG = [0.0] * (2 * STRONG_WEIGHT)  # no answer: counted as a strong loss in both games, no judge call


def _bootstrap_means(values: list[float], n_boot: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    n = len(values)
    return [sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(n_boot)]


def _interval(reps: list[float]) -> list[float]:
    s = sorted(reps)
    return [round(100 * s[int(0.05 * len(s))], 4), round(100 * s[min(len(s) - 1, int(0.95 * len(s)))], 4)]


def win_rates(verdicts: list[dict], n_boot: int = 1000, seed: int = 0) -> dict:
    """Per category: win rate over battles with its 90% bootstrap interval; the paper's headline when both subsets
    are there. ``verdicts``: one per judged sample, with ``category`` and ``battles`` (None = a null judgment)."""
    by_cat: dict[str, list[float]] = {}
    nulls: dict[str, int] = {}
    for v in verdicts:
        cat = v.get("category", "hard_prompt")
        if v.get("battles") is None:
            nulls[cat] = nulls.get(cat, 0) + 1
            continue
        by_cat.setdefault(cat, []).extend(v["battles"])
    out, reps = {}, {}
    for i, (cat, vals) in enumerate(sorted(by_cat.items())):
        reps[cat] = _bootstrap_means(vals, n_boot, seed + i)
        out[cat] = {"win_rate": round(100 * mean(vals), 4), "ci90_bootstrap": _interval(reps[cat]),
                    "stderr_bootstrap": round(100 * pstdev(reps[cat]), 4), "battles": len(vals),
                    "null_judgments": nulls.get(cat, 0)}
    for cat, n in nulls.items():
        out.setdefault(cat, {"win_rate": None, "battles": 0, "null_judgments": n})
    headline = None
    if all(c in reps for c in HEADLINE):
        paired = [mean(r) for r in zip(*(reps[c] for c in HEADLINE))]
        headline = {"win_rate": round(mean(out[c]["win_rate"] for c in HEADLINE), 4),
                    "ci90_bootstrap": _interval(paired),
                    "stderr_bootstrap": round(100 * pstdev(paired), 4), "of": list(HEADLINE)}
    return {"subsets": out, "headline": headline}
