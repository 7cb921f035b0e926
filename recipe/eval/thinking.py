"""Which part of a response is graded, given how it was generated (``recipe eval score --thinking auto|on|off``).

A suite's scorer receives ``thinking``: ``True`` (on: generated in thinking mode, only the text after the last
``</think>`` is graded, none when it never closed), ``False`` (off: generated without thinking, the whole text is
graded) or ``None`` (auto, for responses from any system: a closed think block is removed, a block opened and never
closed is no answer, and a text without any think tag is the answer whole). Generation by the project knows its own
mode and passes ``True``/``False``; ``recipe eval score`` defaults to auto. The rules live in
``recipe.rewards.extract.parse_response``; this module maps the three spellings onto them.
"""
from __future__ import annotations

from typing import Any

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
