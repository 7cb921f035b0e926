"""Row formats: NeMo-Gym rows (RL prompts) and SFT chat rows, each with a lossless normalize/denormalize pair.

:func:`detect_format` picks one for a parsed row: ``nemo_gym`` when it has ``responses_create_params``
(or NeMo-RL's ``task_input.responses_create_params``), ``messages`` when it has a ``messages`` list,
``normalized`` when it already is a record (id, domain, source, messages: e.g. the tiny domain generators).
"""
from __future__ import annotations

from typing import Literal

from recipe.data.formats.chat_rows import from_chat, to_chat
from recipe.data.formats.row_error import RowError
from recipe.data.formats.nemo_gym import from_nemo_gym, to_nemo_gym, verifier_from_row
from recipe.data.record import RecordError, validate_record

Format = Literal["auto", "nemo_gym", "messages", "normalized"]
_RECORD_KEYS = {"id", "domain", "source", "messages"}


def detect_format(row: object) -> str:
    """``nemo_gym`` or ``messages`` for a parsed row; raises :class:`RowError` ``unknown_format`` otherwise."""
    if isinstance(row, dict):
        if _RECORD_KEYS <= row.keys() and "responses_create_params" not in row:
            return "normalized"
        if "responses_create_params" in row or isinstance(row.get("task_input"), dict):
            return "nemo_gym"
        if "messages" in row:
            return "messages"
        raise RowError("unknown_format", f"row has neither 'responses_create_params' nor 'messages' "
                       f"(keys: {sorted(row)[:8]}); pass --format nemo_gym|messages if this is intended")
    raise RowError("wrong_type", f"row is a {type(row).__name__}, expected a JSON object")


def normalize_row(row: object, fmt: str, **kw) -> dict:
    """Normalize a parsed row with format ``fmt`` (``auto`` detects it)."""
    f = detect_format(row) if fmt == "auto" else fmt
    if f == "nemo_gym":
        return from_nemo_gym(row, **kw)
    if f == "messages":
        return from_chat(row, **kw)
    if f == "normalized":
        if not isinstance(row, dict):
            raise RowError("wrong_type", f"row is a {type(row).__name__}, expected a JSON object")
        try:
            return validate_record(row)
        except RecordError as e:
            raise RowError("invalid_record", str(e)) from None
    raise ValueError(f"unknown format {fmt!r}: expected auto, nemo_gym, messages or normalized")


__all__ = ["Format", "RowError", "detect_format", "from_chat", "from_nemo_gym", "normalize_row", "to_chat",
           "to_nemo_gym", "verifier_from_row"]
