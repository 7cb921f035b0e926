"""The one error type row parsers raise: a machine-readable ``reason`` plus a human ``detail``.

Curation turns it into a quarantine entry (row id, reason, detail); it never escapes ``curate``.
"""
from __future__ import annotations


class RowError(ValueError):
    """A row cannot be read. ``reason`` is one of: ``invalid_utf8``, ``malformed_json``, ``wrong_type``,
    ``missing_field``, ``empty_messages``, ``too_long``, ``unknown_format``, ``invalid_record``."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
