"""Answer-type math grading as NVIDIA's evaluation stack does it (NeMo-Skills ``evaluation/math_grader.py``:
``extract_answer`` + ``math_equal``), used by AIME 2025, HMMT Feb 2025 and IMO-AnswerBench's rule-based pre-check.

Extraction (``recipe.rewards.extract.final_boxed``, shared with the ``math`` reward of the RL stages): the last
``\\boxed`` of the answer text; its braced argument with brace matching. When that last ``\\boxed`` never closes its
brace, there is no answer (an earlier box is not used: a truncated final answer is not replaced by a draft one).

Equivalence (``equivalent(gold, pred)``), in NeMo-Skills' order:
1. a gold answer that is one letter A-J is compared as a multiple-choice option (Math-Verify string extraction);
2. a number followed by ``%`` / ``\\%`` loses the sign; trailing ``.`` and ``\\`` are dropped;
3. both go through latex2sympy2's ``normalize_latex`` (default ``NormalizationConfig``); when both are plain words
   (letters, spaces, commas) or plain digits the answer is that literal comparison (spaces ignored), and equal
   normalised strings are equal;
4. otherwise Math-Verify: each string is wrapped in ``$…$`` unless it already holds a math environment, parsed with
   the default ``LatexExtractionConfig()`` and compared ``verify(gold, pred)`` -- gold first -- with
   ``numeric_precision=15``. Math-Verify's ``signal.alarm`` timeouts are disabled; ``recipe.rewards.timeouts``
   bounds the whole check instead (reason ``timeout``), so it runs in threads and worker processes.

Deliberate deviations, each listed with its reason in docs/EVAL_HARNESS.md and tested:
- ``\\fbox{…}`` is read when the text has no ``\\boxed`` at all (NeMo-Skills' ``\\fbox`` fallback is never reached);
- ``\\boxed 70`` / ``\\boxed {70}`` (TeX ignores the space; the argument is the next token or group) are read;
- two integers compare by value, so ``070`` equals ``70`` (AIME answers are 000-999: the leading zeros are the
  competition's own answer format).
"""
from __future__ import annotations

import re

from recipe.rewards.extract import final_boxed  # noqa: F401  (the extraction rule, shared with the math reward)
from recipe.rewards.timeouts import CheckTimeout, run_with_timeout

TIMEOUT_S = 10.0  # NeMo-Skills' math evaluator gives verify 10 s (MathEvaluatorConfig.timeout)
NUMERIC_PRECISION = 15  # MathEvaluatorConfig.numeric_precision
_MCQ = "ABCDEFGHIJ"
_PERCENT = re.compile(r"(\d+\.?\d*)(?:\\%|%)")
_PLAIN = re.compile(r"[a-zA-Z ,]+|[0-9 ]+")
_MATH_ENV = re.compile(r"\$.*\$|\\\(.*\\\)|\\\[.*\\\]|\\boxed\{", re.DOTALL)
_INTEGER = re.compile(r"[+-]?\d+")


def _plain_normalise(s: str) -> str:
    m = _PERCENT.fullmatch(s)
    if m:
        s = m.group(1)
    return s.rstrip(".\\")


def _latex_normalise(s: str) -> str:
    from latex2sympy2_extended import NormalizationConfig, normalize_latex
    return normalize_latex(s, NormalizationConfig())


def _as_math(s: str) -> str:
    return s if _MATH_ENV.search(s) else f"${s}$"


def _quiet():
    import math_verify.grader
    import math_verify.parser
    # recipe.rewards.timeouts bounds the check: silence the one-time "timeout disabled" warning.
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True
    math_verify.grader.TIMEOUT_WARNING_SHOWN = True


def _mcq_equal(gold: str, pred: str) -> bool:
    from math_verify import StringExtractionConfig, parse, verify
    cfg = [StringExtractionConfig(strings=tuple(_MCQ))]
    return bool(verify(parse(gold, cfg, parsing_timeout=None), parse(pred, cfg, parsing_timeout=None),
                       timeout_seconds=None))


def _symbolic_equal(gold: str, pred: str) -> bool:
    from math_verify import LatexExtractionConfig, parse, verify
    cfg = [LatexExtractionConfig()]
    g = parse(_as_math(gold), cfg, parsing_timeout=None)
    p = parse(_as_math(pred), cfg, parsing_timeout=None)
    return bool(verify(g, p, numeric_precision=NUMERIC_PRECISION, timeout_seconds=None))


def _compare(gold: str, pred: str) -> tuple[bool, str]:
    if _INTEGER.fullmatch(gold.strip()) and _INTEGER.fullmatch(pred.strip()):
        return int(gold) == int(pred), "integer"
    _quiet()
    if gold.strip() in _MCQ and len(gold.strip()) == 1 and _mcq_equal(gold, pred):
        return True, "mcq"
    gold, pred = _plain_normalise(gold), _plain_normalise(pred)
    g_norm, p_norm = _latex_normalise(gold), _latex_normalise(pred)
    same = g_norm.replace(" ", "") == p_norm.replace(" ", "")
    if same or (_PLAIN.fullmatch(g_norm) and _PLAIN.fullmatch(p_norm)):
        return same, "literal"
    return _symbolic_equal(gold, pred), "math_verify"


def equivalent(gold: object, pred: str | None, timeout_s: float = TIMEOUT_S) -> tuple[bool, str]:
    """(equal?, how) with ``how`` in integer | mcq | literal | math_verify | no_answer | timeout."""
    if pred is None:
        return False, "no_answer"
    try:
        return run_with_timeout(lambda: _compare(str(gold), str(pred)), timeout_s)
    except CheckTimeout:
        return False, "timeout"
