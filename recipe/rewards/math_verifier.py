"""``math`` verifier: last ``\\boxed{}`` after ``</think>``, checked with Math-Verify (EVAL.md §3).

Rules, in order: the thinking rule of ``recipe.rewards.extract.parse_response`` for the record's ``mode`` (no
``</think>`` in thinking mode → ``unterminated_think``; ``off`` grades the whole text; otherwise a closed think block
is removed and an unclosed one is ``unterminated_think``); the last ``\\boxed`` read as the AIME/HMMT evaluation
reads it (``final_boxed``: brace matching, a last box that never closes is ``no_answer``, ``\\fbox`` only when there
is no ``\\boxed``); literal compare of
whitespace-normalised strings; two plain integers (up to 9 digits) compare by value (as Math-Verify would, without
its ~2 ms parse); then ``math_verify.verify(gold, pred)`` — gold first, the check is asymmetric — with the RL
normalisation (``malformed_operators=False, nits=False``) and ``boxed_match_priority=0``. Math-Verify's own
``signal.alarm`` timeouts are disabled (``parsing_timeout=None, timeout_seconds=None``) and
``recipe.rewards.timeouts`` bounds the whole check (``timeout`` reason), so it works in threads and worker processes.

Not covered: NeMo-Skills ``take_modulo``, the LLM-judge fallback of ``math_with_judge`` (rule-based only).
"""
from __future__ import annotations

import re
from typing import Any

from recipe.rewards.extract import final_boxed, parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, binary, fail
from recipe.rewards.spec import require
from recipe.rewards.timeouts import CheckTimeout, run_with_timeout

DEFAULT_TIMEOUT_S = 5.0
_DELIMS = ("$", "\\(", "\\[", "\\boxed", "\\fbox")


def _configs():
    import math_verify.grader
    import math_verify.parser
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    # We do provide our own timeout (recipe.rewards.timeouts): silence the one-time "timeout disabled" warning.
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True
    math_verify.grader.TIMEOUT_WARNING_SHOWN = True

    norm = NormalizationConfig(basic_latex=True, units=True, malformed_operators=False, nits=False, boxed="all", equations=False)
    return [LatexExtractionConfig(boxed_match_priority=0, normalization_config=norm), ExprExtractionConfig()]


_CFG: list | None = None


def _norm_literal(s: str) -> str:
    s = s.strip().strip("$").strip()
    s = re.sub(r"^\\\(|\\\)$", "", s).strip()
    s = re.sub(r"\s+", "", s).rstrip(".").replace("\\!", "").replace("\\,", "").replace("\\left", "").replace("\\right", "")
    return s.replace("dfrac", "frac").replace("tfrac", "frac")


_INT = re.compile(r"[+-]?\d{1,9}")  # plain integers Math-Verify would compare by value (a 2 ms parse each)


def _wrap(s: str) -> str:
    return s if any(d in s for d in _DELIMS) else f"${s}$"


def check_math(gold: str, pred: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[bool, str]:
    """(equivalent?, how) for a gold answer and an extracted prediction. ``how`` ∈ literal | math_verify | …"""
    global _CFG
    g, p = _norm_literal(gold), _norm_literal(pred)
    if g == p and p:
        return True, "literal"
    if _INT.fullmatch(g) and _INT.fullmatch(p):  # two integers: no parser needed
        return int(g) == int(p), "integer"
    from math_verify import parse, verify

    if _CFG is None:
        _CFG = _configs()
    cfg = _CFG

    def run():
        g = parse(_wrap(gold), extraction_config=cfg, parsing_timeout=None)
        p = parse(_wrap(pred), extraction_config=cfg, parsing_timeout=None)
        if not g:
            return None, "gold_unparseable"
        if not p:
            return False, "pred_unparseable"
        return bool(verify(g, p, timeout_seconds=None)), "math_verify"

    try:
        ok, how = run_with_timeout(run, timeout_s)
    except CheckTimeout:
        return False, "timeout"
    if ok is None:
        return False, how
    return ok, how


@register("math")
def verify_math(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    gold = require(spec, "expected_answer", (str, int, float))
    gold = str(gold)
    if not gold.strip():
        return fail("invalid_field:expected_answer")
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    pred = final_boxed(parsed.answer)
    if pred is None or not pred.strip():
        return fail("no_answer", extracted=None)
    ok, how = check_math(gold, pred, float(spec.get("timeout_s", DEFAULT_TIMEOUT_S)))
    if how == "gold_unparseable":
        return fail("invalid_field:expected_answer", extracted=pred, check=how)
    if how == "timeout":
        return fail("timeout", extracted=pred, check=how)
    return binary(ok, extracted=pred, check=how)
