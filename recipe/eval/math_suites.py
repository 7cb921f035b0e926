"""AIME 2025 and HMMT Feb 2025: answer-type math, graded on the last ``\\boxed{}`` after ``</think>`` (EVAL.md §3).

Rules, in order: thinking mode and no ``</think>`` (or any ``<think>`` left open) -> no answer, never a ``\\boxed``
mined from unfinished reasoning; the last ``\\boxed{…}`` (fallback ``\\fbox``) with brace matching; literal compare
of normalised strings; then Math-Verify ``verify(gold, pred)`` -- gold first -- with the eval extraction settings
(``LatexExtractionConfig(boxed_match_priority=0)`` with default normalisation, plus ``ExprExtractionConfig``),
timeouts enforced by ``recipe.rewards.timeouts`` (Math-Verify's ``signal.alarm`` disabled). Reported: avg@k ± SE,
pass@k, no-answer rate; each sample's extracted answer is kept.

Rows: ``aime25`` = NeMo-Skills' ``test.txt`` format (``id``, ``problem``, ``expected_answer``); ``hmmt_feb25`` =
MathArena's format (``problem_idx``, ``problem``, ``answer``; answers are LaTeX strings, one is a two-value list).
"""
from __future__ import annotations

import re
from typing import Any

from recipe.eval.sampling import SamplingParams
from recipe.eval.suites import RowError, Suite, register_suite
from recipe.rewards.extract import BadResponse, last_boxed, parse_response
from recipe.rewards.timeouts import CheckTimeout, run_with_timeout

SYSTEM_PROMPT = "You are a helpful and harmless assistant.\n\nYou are not allowed to use any tools"  # EVAL.md §1
MATH_PROMPT = ("Solve the following math problem. Make sure to put the answer (and only answer) inside \\boxed{{}}."
               "\n\n{problem}")  # NeMo-Skills generic/math (EVAL.md §1)
TIMEOUT_S = 5.0
_DELIMS = ("$", "\\(", "\\[", "\\boxed", "\\fbox")
_CFG = None


def _configs():
    import math_verify.grader
    import math_verify.parser
    from math_verify import ExprExtractionConfig, LatexExtractionConfig
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True
    math_verify.grader.TIMEOUT_WARNING_SHOWN = True
    return [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]


def _norm(s: str) -> str:
    s = s.strip().strip("$").strip()
    s = re.sub(r"\s+", "", s).rstrip(".").replace("\\!", "").replace("\\,", "").replace("\\left", "").replace("\\right", "")
    s = s.replace("dfrac", "frac").replace("tfrac", "frac").replace("%", "")
    return s


def equivalent(gold: str, pred: str, timeout_s: float = TIMEOUT_S) -> tuple[bool, str]:
    """(equal?, how): ``literal`` after normalisation, else Math-Verify (gold first); ``timeout`` / ``unparseable``."""
    global _CFG
    if _norm(gold) and _norm(gold) == _norm(pred):
        return True, "literal"
    from math_verify import parse, verify
    if _CFG is None:
        _CFG = _configs()

    def wrap(s: str) -> str:
        return s if any(d in s for d in _DELIMS) else f"${s}$"

    def run():
        g = parse(wrap(gold), extraction_config=_CFG, parsing_timeout=None)
        p = parse(wrap(pred), extraction_config=_CFG, parsing_timeout=None)
        if not g:
            return False, "gold_unparseable"
        if not p:
            return False, "pred_unparseable"
        return bool(verify(g, p, timeout_seconds=None)), "math_verify"

    try:
        return run_with_timeout(run, timeout_s)
    except CheckTimeout:
        return False, "timeout"


def score_math(gold: str, response: Any, thinking: bool) -> dict:
    try:
        parsed = parse_response(response, "thinking" if thinking else None)
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None:
        return {"score": 0.0, "no_answer": True, "reason": "unclosed_think", "extracted": None}
    pred = last_boxed(parsed.answer)
    if pred is None or not pred.strip():
        return {"score": 0.0, "no_answer": True, "reason": "no_boxed", "extracted": None}
    ok, how = equivalent(gold, pred)
    return {"score": 1.0 if ok else 0.0, "no_answer": False, "reason": "correct" if ok else "wrong", "extracted": pred,
            "check": how}


def _gold(row: dict, field: str) -> str:
    g = row[field]
    if isinstance(g, bool) or not isinstance(g, (str, int, float)) or not str(g).strip():
        raise RowError(f"field {field!r} must be a non-empty answer string, got {g!r}")
    return str(g)


def math_messages(row: dict, thinking: bool) -> list[dict]:
    if not isinstance(row.get("problem"), str):
        raise RowError("field 'problem' must be a string")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": MATH_PROMPT.format(problem=row["problem"])}]


# Defaults: EVAL.md §2 (AIME/HMMT: T 1.0, top-p 1.0, avg@64 at 131K tokens in the paper; avg@8 in CI).
PAPER_MATH = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=131072, thinking=True, k=8)

def matharena_to_nemo_skills(rows: list[dict]) -> list[dict]:
    """MathArena's Hub layout (``problem_idx`` 1..30, ``answer``) -> NeMo-Skills' (``id`` aime25-0.., ``expected_answer``);
    rows already in NeMo-Skills' layout pass unchanged."""
    out = []
    for r in rows:
        if "expected_answer" in r or "problem_idx" not in r:
            out.append(r)
        else:
            out.append({"id": f"aime25-{int(r['problem_idx']) - 1}", "problem": r["problem"],
                        "expected_answer": str(r["answer"])})
    return out


register_suite(Suite(
    name="aime25", adapt_rows=matharena_to_nemo_skills, description="AIME 2025 I+II (30), last \\boxed{} after </think>, Math-Verify",
    id_field="id", required_fields=("problem", "expected_answer"), messages=math_messages,
    score=lambda row, resp, thinking: score_math(_gold(row, "expected_answer"), resp, thinking),
    defaults=PAPER_MATH, scorer_version="math-boxed-1"))

register_suite(Suite(
    name="hmmt_feb25", description="HMMT February 2025 (30), last \\boxed{} after </think>, Math-Verify",
    id_field="problem_idx", required_fields=("problem", "answer"), messages=math_messages,
    score=lambda row, resp, thinking: score_math(_gold(row, "answer"), resp, thinking),
    defaults=PAPER_MATH, scorer_version="math-boxed-1"))
