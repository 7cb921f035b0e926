"""Hidden rubrics of the tiny ``chat`` domain (helpfulness prompts), and the per-response ``chat_rubric`` verifier.

A record's ``verifier`` is ``{"name": "chat_rubric", "rubric": [item, ...]}``; the model never sees the rubric.
Items (all on the visible answer, after ``</think>``; an unfinished or empty answer meets none):

- ``{"check": "mentions", "word": w}``: answers the question asked (mentions its subject, any case);
- ``{"check": "format", "style": "upper" | "list" | "quote"}``: uses the requested format (all capitals; starts
  with ``"- "``; wrapped in double quotes);
- ``{"check": "max_words", "n": k}``: at most k words (a request to keep it short);
- ``{"check": "no_filler"}``: none of the filler words in ``FILLER``.

``rubric_met`` lists which items hold; the ``chat_rubric`` verifier scores the fraction met (used to log training
reward and by MOPD). Preferences between responses come from ``recipe.rewards.pairwise_judges.HiddenRubricJudge``.
"""
from __future__ import annotations

import re
from typing import Any

from recipe.rewards.extract import BadResponse, parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult

FILLER = ("sure", "well", "basically", "okay", "um")
_WORD = re.compile(r"[A-Za-z0-9']+")


def visible_answer(response: Any) -> str | None:
    """The answer after the reasoning, or None when the response is unfinished/malformed."""
    try:
        return parse_response(response, None).answer
    except BadResponse:
        return None


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _holds(item: dict, text: str) -> bool:
    check = item.get("check")
    if check == "mentions":
        return item["word"].lower() in (w.lower() for w in words(text))
    if check == "format":
        style = item["style"]
        if style == "upper":
            return any(c.isalpha() for c in text) and text == text.upper()
        if style == "list":
            return text.lstrip().startswith("- ")
        if style == "quote":
            t = text.strip()
            return len(t) >= 2 and t[0] == t[-1] == '"'
        raise ValueError(f"chat rubric: unknown format style {style!r}")
    if check == "max_words":
        return 0 < len(words(text)) <= int(item["n"])
    if check == "no_filler":
        return not any(w.lower() in FILLER for w in words(text))
    raise ValueError(f"chat rubric: unknown check {check!r} (mentions, format, max_words, no_filler)")


def rubric_met(rubric: list[dict], response: Any) -> list[bool]:
    if not rubric:
        raise ValueError("chat rubric: a record needs at least one rubric item")
    text = visible_answer(response)
    if text is None or not text.strip():
        return [False] * len(rubric)
    return [_holds(item, text.strip()) for item in rubric]


@register("chat_rubric")
def verify_chat_rubric(record: dict, response: Any) -> VerifierResult:
    met = rubric_met(record["verifier"]["rubric"], response)
    return VerifierResult(sum(met) / len(met), "correct" if all(met) else "rubric_partial", {"met": met})
