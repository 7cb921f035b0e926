"""Shared response parsing: one place that turns any response shape into answer text.

Accepted response shapes (anything else → ``BadResponse``, which verifiers score 0 with ``bad_response``):
- a plain string (raw completion, possibly with ``<think>…</think>``);
- a chat message dict ``{"role": "assistant", "content": str | [parts], "reasoning_content"?, "tool_calls"?}``;
- an OpenAI Responses-API response dict ``{"output": [items]}`` (NeMo-Gym rollouts), items of type
  ``message`` / ``reasoning`` / ``function_call`` / ``function_call_output``;
- a list of such messages or output items (a trajectory).

Thinking rule (EVAL.md §3 rule 1, NeMo-Skills ``parse_reasoning``), by ``mode``:
- ``thinking``: only the text after the last ``</think>`` is the answer; with no ``</think>`` there is no answer
  (``unterminated_think``), never a stray ``\\boxed`` mined from unfinished reasoning;
- ``off``: the response was generated without thinking; its whole text is the answer, nothing is stripped
  (NeMo-Skills with ``parse_reasoning=False``);
- anything else (``None``, ``auto``, ``instruct``): a closed think block is removed, a block opened and never
  closed is no answer, and text without any think tag is the answer whole.
When a reasoning parser already split the reasoning out (``reasoning_content`` / ``reasoning`` items), the visible
content is the answer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from recipe.data.record import content_text

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class BadResponse(ValueError):
    """The response is not text nor a known message/response shape."""


@dataclass
class ParsedResponse:
    full_text: str  # all visible text (reasoning excluded when it was split out)
    answer: str | None  # graded text; None when thinking never ended
    reasoning: str = ""
    tool_calls: list[dict] = field(default_factory=list)  # [{"name", "arguments"}] from structured calls
    think_closed: bool = True


def _content_text(content: Any) -> str:
    try:
        return content_text(content, strict=True, joiner="")
    except ValueError as e:
        raise BadResponse(str(e)) from None


def _call(name: Any, arguments: Any) -> dict:
    return {"name": name, "arguments": arguments}


def _from_items(items: list) -> tuple[list[str], list[str], list[dict]]:
    """Collect (message texts, reasoning texts, tool calls) from messages or Responses output items."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict] = []
    for it in items:
        if isinstance(it, str):
            texts.append(it)
            continue
        if not isinstance(it, dict):
            raise BadResponse(f"response item must be a dict, got {type(it).__name__}")
        typ = it.get("type")
        role = it.get("role")
        if typ == "reasoning":
            summ = it.get("summary") or []
            reasoning.append("".join(s.get("text", "") if isinstance(s, dict) else str(s) for s in summ))
            if it.get("content"):
                reasoning.append(_content_text(it.get("content")))
        elif typ == "function_call":
            calls.append(_call(it.get("name"), it.get("arguments")))
        elif typ == "function_call_output" or role == "tool":
            continue
        elif typ == "message" or role == "assistant" or (typ is None and "content" in it):
            if role not in (None, "assistant"):
                continue  # user/system turns of a trajectory are not the response
            texts.append(_content_text(it.get("content")))
            if it.get("reasoning_content"):
                reasoning.append(str(it["reasoning_content"]))
            for tc in it.get("tool_calls") or []:
                fn = tc.get("function", tc) if isinstance(tc, dict) else {}
                calls.append(_call(fn.get("name"), fn.get("arguments")))
        else:
            raise BadResponse(f"unknown response item type {typ!r}")
    return texts, reasoning, calls


def parse_response(response: Any, mode: str | None = None) -> ParsedResponse:
    """Normalise ``response`` and apply the thinking rule for ``mode``."""
    split_by_parser = False
    if isinstance(response, str):
        texts, reasoning, calls = [response], [], []
    elif isinstance(response, dict):
        if isinstance(response.get("output"), list):
            texts, reasoning, calls = _from_items(response["output"])
        else:
            texts, reasoning, calls = _from_items([response])
        split_by_parser = bool(reasoning) or "reasoning_content" in response
    elif isinstance(response, list):
        texts, reasoning, calls = _from_items(response)
        split_by_parser = bool(reasoning)
    else:
        raise BadResponse(f"response must be text, a message dict or a Responses object, got {type(response).__name__}")

    # The answer of a multi-turn trajectory is its last assistant text; full text keeps everything.
    full = "\n".join(t for t in texts if t)
    last = next((t for t in reversed(texts) if t and t.strip()), "")
    reasoning_text = "\n".join(r for r in reasoning if r)
    if mode == "off":
        return ParsedResponse(full, last.strip(), reasoning_text, calls, True)
    if THINK_CLOSE in last:
        head, _, answer = last.rpartition(THINK_CLOSE)
        reasoning_text = (reasoning_text + "\n" + head.replace(THINK_OPEN, "")).strip()
        return ParsedResponse(full, answer.strip(), reasoning_text, calls, True)
    if mode == "thinking" and not split_by_parser:
        return ParsedResponse(full, None, reasoning_text + last, calls, False)
    if THINK_OPEN in last:  # opened but never closed, whatever the mode
        return ParsedResponse(full, None, reasoning_text + last, calls, False)
    return ParsedResponse(full, last.strip(), reasoning_text, calls, True)


def _matching_brace(text: str, open_at: int) -> int | None:
    """Index of the ``}`` that closes the ``{`` at ``open_at``; None when it never closes."""
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{…}`` (fallback ``\\fbox{…}``) with brace matching, else None.

    >>> last_boxed(r"so \\boxed{1} then \\boxed{\\frac{1}{2}}.")
    '\\\\frac{1}{2}'
    >>> last_boxed("no box") is None
    True
    """
    for cmd in ("\\boxed", "\\fbox"):
        idx = text.rfind(cmd)
        while idx >= 0:
            j = idx + len(cmd)
            while j < len(text) and text[j] == " ":
                j += 1
            if j < len(text) and text[j] == "{":
                close = _matching_brace(text, j)
                if close is not None:
                    return text[j + 1 : close]
                # unbalanced: keep looking further left
            elif cmd == "\\boxed" and j < len(text) and text[j] not in "{":
                # "\boxed 5" form: take the next token
                m = text[j:].split()
                if m and text[idx + len(cmd)] == " ":
                    return m[0].rstrip(".$")
            idx = text.rfind(cmd, 0, idx)
    return None


def _argument(text: str, after: int, *, spaced_token: bool) -> str | None:
    """The argument of a command ending at ``after``: a braced group (optionally after spaces), or with
    ``spaced_token`` the next whitespace-delimited token after at least one space."""
    j = after
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == "{":
        close = _matching_brace(text, j)
        return None if close is None else text[j + 1:close]
    if spaced_token and j > after and j < len(text):
        token = text[j:].split(None, 1)[0].rstrip(".,;$")
        return token or None
    return None


def final_boxed(text: str) -> str | None:
    """The last ``\\boxed`` argument, as NeMo-Skills' ``extract_answer`` reads it
    (``recipe.eval.benchmarks.math_grading``).

    Unlike ``last_boxed``, a last ``\\boxed`` whose brace never closes is no answer (None): an earlier box is never
    used instead. Read beyond NeMo-Skills (docs/EVAL_HARNESS.md): ``\\boxed 70`` / ``\\boxed {70}``, and
    ``\\fbox{…}`` when the text has no ``\\boxed`` at all.

    >>> final_boxed(r"\\boxed{1} then \\boxed{\\frac{1}{2}}.")
    '\\\\frac{1}{2}'
    >>> final_boxed(r"\\boxed{1} then \\boxed{2") is None
    True
    """
    if text is None:
        return None
    at = text.rfind("\\boxed")
    if at >= 0:
        return _argument(text, at + len("\\boxed"), spaced_token=True)
    at = text.rfind("\\fbox")
    if at >= 0:
        return _argument(text, at + len("\\fbox"), spaced_token=False)
    return None


def maybe_json(value: Any) -> Any:
    """Parse a string that holds JSON; anything else (or unparseable text) is returned unchanged."""
    if isinstance(value, str):
        s = value.strip()
        if s:
            try:
                return json.loads(s)
            except (ValueError, RecursionError):
                return value
    return value


def strip_code_fence(text: str) -> str:
    """Body of a single fenced block (```json … ```) when the text is one, else the text stripped."""
    s = text.strip()
    if s.startswith("```"):
        first_nl = s.find("\n")
        end = s.rfind("```")
        if first_nl != -1 and end > first_nl:
            return s[first_nl + 1 : end].strip()
    return s
