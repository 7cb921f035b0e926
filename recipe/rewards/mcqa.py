"""``mcqa`` verifier: extract one option letter from the answer and compare with ``expected_answer``.

Extraction (on the text after ``</think>``), strongest evidence first, the last match of a pattern wins:
1. ``\\boxed{B}`` (also ``\\boxed{\\text{B}}``, ``\\boxed{(B)}``, ``\\boxed{B. text}``, or the boxed
   option text itself);
2. an answer statement: ``Answer: B``, ``**Answer:** (B)``, ``the answer is B``, ``Final answer - B``;
3. the whole answer is a letter: ``B``, ``(B)``, ``B.``, ``B) text``;
4. the last parenthesised letter ``(B)`` in the answer.
``grading_mode: strict_single_letter_boxed`` (NeMo-Gym mcqa) accepts only rule 1 with a bare letter.
Letters are limited to the row's options when given (else A–Z).
"""
from __future__ import annotations

import re
from typing import Any

from recipe.rewards.extract import last_boxed, parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, binary, fail
from recipe.rewards.spec import FieldError, require

_ANSWER_STMT = re.compile(
    r"(?:final\s+answer|correct\s+answer|answer|correct\s+option|option|choice)\s*(?:is|:|=|-|—)?\s*(?:option\s*)?"
    r"[\*\s]*[:\-]?[\*\s]*[\(\[]?\s*([A-Z])\s*[\)\]]?(?![A-Za-z])",
    re.IGNORECASE,
)
_TEXT_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")


def option_letters(options: Any) -> dict[str, str]:
    """Letter → option text from the row's ``options`` (list of {"A": t} dicts, a dict, or list of texts)."""
    if options is None:
        return {}
    out: dict[str, str] = {}
    if isinstance(options, dict):
        items = options.items()
    elif isinstance(options, list):
        items = []
        for i, o in enumerate(options):
            if isinstance(o, dict) and len(o) == 1:
                items.extend(o.items())
            elif isinstance(o, str):
                items.append((chr(ord("A") + i), o))
            else:
                raise FieldError("invalid_field:options", f"option {i} must be a {{letter: text}} dict or a string")
    else:
        raise FieldError("invalid_field:options", "options must be a list or dict")
    for k, v in items:
        out[str(k).strip().upper()] = str(v)
    return out


def _letter_of(s: str, letters: set[str], texts: dict[str, str]) -> str | None:
    s = _TEXT_WRAP.sub(r"\1", s).strip().strip("$*").strip()
    m = re.fullmatch(r"[\(\[]?\s*([A-Za-z])\s*[\)\]]?(?:[\.\):]\s*.*)?", s, re.DOTALL)
    if m and m.group(1).upper() in letters and (m.group(1).isupper() or len(s) <= 3):
        return m.group(1).upper()
    low = s.lower().rstrip(".")
    for k, v in texts.items():
        if low and low == v.strip().lower().rstrip("."):
            return k
    return None


def extract_letter(answer: str, letters: set[str], texts: dict[str, str], strict_boxed: bool = False) -> tuple[str | None, str]:
    boxed = last_boxed(answer)
    if boxed is not None:
        if strict_boxed:
            s = _TEXT_WRAP.sub(r"\1", boxed).strip()
            return (s if len(s) == 1 and s.upper() in letters and s.isupper() else None), "boxed"
        got = _letter_of(boxed, letters, texts)
        if got:
            return got, "boxed"
    if strict_boxed:
        return None, "none"
    stmts = [m.group(1).upper() for m in _ANSWER_STMT.finditer(answer) if m.group(1).upper() in letters and m.group(1).isupper()]
    if stmts:
        return stmts[-1], "answer_statement"
    whole = _letter_of(answer, letters, {})
    if whole:
        return whole, "whole"
    parens = [x for x in re.findall(r"\(([A-Z])\)", answer) if x in letters]
    if parens:
        return parens[-1], "parenthesised"
    return None, "none"


@register("mcqa")
def verify_mcqa(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    gold = str(require(spec, "expected_answer", (str,))).strip().upper()
    texts = option_letters(spec.get("options"))
    letters = set(texts) or {chr(c) for c in range(ord("A"), ord("Z") + 1)}
    if gold not in letters:
        return fail("invalid_field:expected_answer", expected=gold)
    mode = spec.get("grading_mode", "lenient")
    if mode not in ("lenient", "strict_single_letter_boxed"):
        return fail("invalid_field:grading_mode", grading_mode=mode)
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    letter, how = extract_letter(parsed.answer, letters, texts, strict_boxed=mode == "strict_single_letter_boxed")
    if letter is None:
        return fail("no_answer", extracted=None)
    return binary(letter == gold, extracted=letter, rule=how)
