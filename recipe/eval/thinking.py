"""Which part of a response is graded, given how it was generated (``recipe eval score --thinking auto|on|off``).

A suite's scorer receives ``thinking``: ``True`` (on: generated in thinking mode, only the text after the last
``</think>`` is graded, none when it never closed), ``False`` (off: generated without thinking, the whole text is
graded) or ``None`` (auto, for responses from any system: a closed think block is removed, a block opened and never
closed is no answer, and a text without any think tag is the answer whole). Generation by the project knows its own
mode and passes ``True``/``False``; ``recipe eval score`` defaults to auto. The rules live in
``recipe.rewards.extract.parse_response``; this module maps the three spellings onto them.

Unfinished is not an answer (EVAL.md §3 rule 1; NeMo-Skills ``remove_thinking``): a generation cut at the length
limit (``finish_reason`` ``length``) whose reasoning never closed is no answer in every mode but off, even when it
carries no think tag at all (a chat template that opens ``<think>`` in the prompt leaves none in the text), so a
``\\boxed`` written mid-reasoning is never graded.
"""
from __future__ import annotations

from typing import Any

from recipe.rewards.extract import THINK_CLOSE, BadResponse, parse_response

THINKING_MODES = ("auto", "on", "off")
_FLAG = {"auto": None, "on": True, "off": False}


def thinking_flag(value: Any) -> bool | None:
    """``auto|on|off`` (or ``true``/``false``/``null`` from a JSON row) -> ``None``/``True``/``False``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _FLAG:
        return _FLAG[value.strip().lower()]
    raise ValueError(f"thinking must be one of {', '.join(THINKING_MODES)} (or true/false), got {value!r}")


def thinking_name(flag: bool | None) -> str:
    return {None: "auto", True: "on", False: "off"}[flag]


def parse_mode(flag: bool | None) -> str:
    """The ``parse_response`` mode for a thinking flag."""
    return {None: "auto", True: "thinking", False: "off"}[flag]


def unfinished(response: Any, finish_reason: str | None, flag: bool | None) -> bool:
    """True when the generation hit the length limit before its reasoning closed and the mode is not off."""
    if flag is False or finish_reason != "length":
        return False
    try:
        parsed = parse_response(response, "auto")
    except BadResponse:
        return False  # the scorer reports the shape
    split_and_answered = bool(parsed.reasoning) and bool((parsed.answer or "").strip())  # a parser saw it close
    return THINK_CLOSE not in parsed.full_text and not split_and_answered
