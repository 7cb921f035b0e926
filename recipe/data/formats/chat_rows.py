"""SFT chat rows (OpenAI-style ``messages``) <-> normalized records, lossless in both directions.

Chat rows are what ``nvidia/Nemotron-Cascade-2-SFT-Data`` ships (RECIPE.md §7.1: a ``messages`` list ending
in an assistant turn; assistant turns may carry ``reasoning_content`` or inline ``<think>``, and
``tool_calls``) and what NeMo-RL's openai-format SFT loader and TRL read (fixture
``nemo_rl/nemo_rl_openai_chat_xtoken.jsonl``: ``messages``, ``message_loss_mask``, optional ``tools``).

Mapping: ``messages`` and ``tools`` are copied verbatim (content is never rewritten, so ``<think>`` stays
where it was); every other top-level key (``message_loss_mask``, ``uuid``, ...) is kept in
``metadata["chat"]`` with the original key order, so :func:`to_chat` rebuilds the row key for key.
``mode``: a top-level ``reasoning: on|off`` wins; else ``thinking`` when an assistant turn has
``reasoning_content`` or ``<think>``, ``instruct`` when assistant turns have neither, ``None`` without
assistant turns. Records built elsewhere are written with a ``recipe_record`` key (id, domain, source,
mode, verifier, metadata, license) unless ``embed_record=False``.
"""
from __future__ import annotations

import copy
from typing import Any

from recipe.data.formats.row_error import RowError
from recipe.data.formats.nemo_gym import native_id
from recipe.data.record import make_record, validate_record


def infer_mode(row: dict) -> str | None:
    flag = row.get("reasoning")
    if flag in ("on", "off"):
        return "thinking" if flag == "on" else "instruct"
    assistants = [m for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    if not assistants:
        return None
    for m in assistants:
        if m.get("reasoning_content") or (isinstance(m.get("content"), str) and "<think>" in m["content"]):
            return "thinking"
    return "instruct"


def from_chat(row: Any, *, source_name: str, revision: str | None = None, license: str | None = None,
              row_index: int | str = 0, domain: str | None = None) -> dict:
    """Normalize one chat row; raises :class:`RowError` on rows it cannot read."""
    if not isinstance(row, dict):
        raise RowError("wrong_type", f"row is a {type(row).__name__}, expected a JSON object")
    if "messages" not in row:
        raise RowError("missing_field", "no 'messages' field")
    msgs = row["messages"]
    if not isinstance(msgs, list):
        raise RowError("wrong_type", f"messages is a {type(msgs).__name__}, expected a list")
    if not msgs:
        raise RowError("empty_messages", "messages is empty")
    if isinstance(row.get("recipe_record"), dict):
        rr = row["recipe_record"]
        rec = {"id": rr.get("id"), "domain": rr.get("domain"), "source": rr.get("source"),
               "messages": copy.deepcopy(msgs), "mode": rr.get("mode"), "verifier": copy.deepcopy(rr.get("verifier")),
               "tools": copy.deepcopy(row.get("tools")), "metadata": copy.deepcopy(rr.get("metadata") or {}),
               "license": rr.get("license")}
        try:
            return validate_record(rec)
        except ValueError as e:
            raise RowError("invalid_record", str(e)) from None
    tools = row.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise RowError("wrong_type", f"tools is a {type(tools).__name__}, expected a list")
    extra = {k: copy.deepcopy(v) for k, v in row.items() if k not in ("messages", "tools")}
    nid = native_id(row)
    rid = f"{source_name}:{nid}" if nid is not None else f"{source_name}:row{row_index}"
    meta = {"chat": {"extra": extra, "key_order": list(row.keys())}}
    return make_record(id=rid, domain=domain or "chat", messages=copy.deepcopy(msgs), source_name=source_name,
                       revision=revision, mode=infer_mode(row), verifier=None, tools=copy.deepcopy(tools),
                       metadata=meta, license=license)


def to_chat(record: dict, *, embed_record: bool = True) -> dict:
    """The SFT chat row for ``record`` (the original row, key for key, when it came from one)."""
    chat = (record.get("metadata") or {}).get("chat")
    if chat:
        extra = chat.get("extra") or {}
        row: dict = {}
        for k in chat.get("key_order") or []:
            if k == "messages":
                row["messages"] = copy.deepcopy(record["messages"])
            elif k == "tools":
                if record.get("tools") is not None or "tools" in extra:
                    row["tools"] = copy.deepcopy(record.get("tools"))
            elif k in extra:
                row[k] = copy.deepcopy(extra[k])
        row.setdefault("messages", copy.deepcopy(record["messages"]))
        if record.get("tools") is not None and "tools" not in row:
            row["tools"] = copy.deepcopy(record["tools"])
        return row
    row = {"messages": copy.deepcopy(record["messages"])}
    if record.get("tools") is not None:
        row["tools"] = copy.deepcopy(record["tools"])
    if embed_record:
        row["recipe_record"] = {k: copy.deepcopy(record.get(k)) for k in
                                ("id", "domain", "source", "mode", "verifier", "metadata", "license")}
    return row
