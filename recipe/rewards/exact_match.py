"""``exact_match`` verifier: the answer (last ``\\boxed{}`` after the thinking, else the whole answer text) equals
``expected_answer`` after normalisation (lower case, punctuation and the articles a/an/the removed, whitespace
collapsed: the SQuAD answer normalisation). Used by the tiny long-context domain; at paper scale the long-context
stage is graded by an LLM judge through NeMo-Gym (``reward: llm_judge``, cluster backend; RECIPE.md §4.1 row 5).
"""
from __future__ import annotations

import re
import string
from typing import Any

from recipe.rewards.extract import last_boxed, parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, binary, fail
from recipe.rewards.spec import require

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


@register("exact_match")
def verify_exact_match(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    expected = require(spec, "expected_answer", str)
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    boxed = last_boxed(parsed.answer)
    got = boxed if boxed is not None else parsed.answer
    if not got.strip():
        return fail("no_answer")
    return binary(normalize_answer(got) == normalize_answer(expected), got=got[:200], expected=expected)
