"""The normalized data record shared by data curation, tiny domains, trainers and verifiers.

A record is a plain ``dict`` (JSON-serialisable, one per JSONL line)::

    {"id": str, "domain": str, "source": {"name": str, "revision": str | None},
     "messages": [{"role": ..., "content": ..., optional "reasoning_content", "tool_calls", ...}],
     "mode": "thinking" | "instruct" | None,
     "verifier": {"name": <recipe.rewards registry name>, ...fields} | None,
     "tools": list | None, "metadata": dict, "license": str | None}

Covered here: the field names (the project-wide contract, see the working rules and
``recipe/rewards/spec.py`` for verifier fields), a pydantic validator (:func:`validate_record`,
:func:`record_errors`) and small helpers (text of a record, prompt/answer split).
Not covered: conversion from/to NeMo-Gym rows and SFT chat rows (``recipe.data.formats``).

``mode == "thinking"`` means the answer is only what follows ``</think>``; conversions never rewrite
message content, so the convention is applied by consumers (verifiers, chat template).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

RECORD_FIELDS = ("id", "domain", "source", "messages", "mode", "verifier", "tools", "metadata", "license")
ROLES = ("system", "developer", "user", "assistant", "tool")
VERIFIER_NAMES = ("math", "mcqa", "instruction_following", "structured_output", "tool_call", "code",
                  "pairwise_judge")


class RecordError(ValueError):
    """A dict is not a valid normalized record; the message lists every problem with its field path."""


class _Source(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    revision: str | None = None


class _Message(BaseModel):
    # Extra keys are allowed: real rows carry e.g. "type": "message" (Responses API), "tool_call_id", "name".
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list | None
    reasoning_content: str | None = None
    tool_calls: list | None = None


class _Verifier(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in VERIFIER_NAMES:
            raise ValueError(f"unknown verifier {v!r}; expected one of {list(VERIFIER_NAMES)}")
        return v


class NormalizedRecord(BaseModel):
    """Validator for the record dict (records stay plain dicts; this model only checks them)."""
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    domain: str = Field(min_length=1)
    source: _Source
    messages: list[_Message] = Field(min_length=1)
    mode: Literal["thinking", "instruct"] | None = None
    verifier: _Verifier | None = None
    tools: list | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    license: str | None = None


def record_errors(record: Any) -> list[str]:
    """Every problem with ``record`` as ``"<field path>: <message>"``; empty when valid."""
    if not isinstance(record, dict):
        return [f"<record>: expected a JSON object, got {type(record).__name__}"]
    try:
        NormalizedRecord.model_validate(record)
    except ValidationError as e:
        return [f"{'.'.join(str(p) for p in err['loc']) or '<record>'}: {err['msg']}" for err in e.errors()]
    return []


def validate_record(record: Any) -> dict:
    """Return ``record`` unchanged if valid, else raise :class:`RecordError` naming each bad field."""
    errors = record_errors(record)
    if errors:
        rid = record.get("id") if isinstance(record, dict) else None
        raise RecordError(f"record {rid!r} is not a valid normalized record: " + "; ".join(errors)
                          + " (see recipe/data/record.py for the field contract)")
    return record


def make_record(*, id: str, domain: str, messages: list[dict], source_name: str, revision: str | None = None,
                mode: str | None = None, verifier: dict | None = None, tools: list | None = None,
                metadata: dict | None = None, license: str | None = None) -> dict:
    """Build a record with every field present in the canonical order (validated)."""
    return validate_record({"id": id, "domain": domain, "source": {"name": source_name, "revision": revision},
                            "messages": messages, "mode": mode, "verifier": verifier, "tools": tools,
                            "metadata": metadata or {}, "license": license})


def content_text(content: Any, *, strict: bool = False, joiner: str = "\n") -> str:
    """Plain text of a message ``content`` (a string, or a list of Responses/Chat content parts: strings, ``text``
    parts and ``refusal`` parts). ``strict`` raises ``ValueError`` on any other part or content type instead of
    skipping it (the verifiers grade only what they can read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and p.get("type") == "refusal" and isinstance(p.get("refusal"), str):
                parts.append(p["refusal"])
            elif strict:
                raise ValueError(f"unsupported content part {type(p).__name__}: {str(p)[:80]}")
        return joiner.join(parts)
    if strict:
        raise ValueError(f"message content must be a string or a list of parts, got {type(content).__name__}")
    return str(content)


def record_text(record: dict, *, fields: Literal["prompt", "all"] = "all") -> str:
    """Text used by dedup and decontamination: message contents (``prompt``: non-assistant turns only)."""
    out = []
    for m in record.get("messages") or ():
        if fields == "prompt" and m.get("role") == "assistant":
            continue
        out.append(content_text(m.get("content")))
    return "\n".join(out)


def is_prompt_only(record: dict) -> bool:
    """True when the conversation does not end with an assistant turn (an RL prompt, not an SFT sample)."""
    msgs = record.get("messages") or []
    return not msgs or msgs[-1].get("role") != "assistant"
