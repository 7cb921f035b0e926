"""Verifier specs: the fields a record's ``verifier`` dict carries for each registry name.

Field names mirror NeMo-Gym's row fields (its resources servers' example rows); extra fields are allowed where
real rows need them. ``require`` is the one helper verifiers use to read fields, so a missing or
ill-typed field always scores 0 with ``missing_field:<name>`` / ``invalid_field:<name>``.

- ``math``: ``expected_answer`` (str|number). Optional ``mode`` override.
- ``mcqa``: ``expected_answer`` (letter), ``options`` (list of ``{"A": text}`` dicts, dict or list of
  texts; optional), ``grading_mode``: ``lenient`` (default) | ``strict_single_letter_boxed``.
- ``instruction_following``: ``instruction_id_list`` (list[str]), ``kwargs`` (list of dicts aligned with
  ids; ``None`` values mean unused, as in IFBench's dense rows), ``grading_mode``: ``all`` (default) |
  ``fraction``. Optional ``prompt`` (needed by ``combination:repeat_prompt`` when kwargs lack it).
- ``structured_output``: ``schema_str`` (JSON Schema as a string or dict), ``schema_type``: ``json``
  (default) | ``yaml`` | ``toml``; optional ``response_mode``: ``text`` | ``tool_call`` with ``tool_name``
  and ``tool_payload_key`` (NeMo-Gym structured_outputs v4).
- ``tool_call``: ``expected_calls`` (list of ``{name, arguments}``; ``arguments`` a dict or a JSON
  string; aliases ``expected_answers`` (xlam) and ``ground_truth`` (workplace_assistant)); optional
  ``order``: ``any`` (default) | ``exact``.
- ``code``: ``tests`` (list of ``{input, output}``), ``language``: ``python`` (default) | ``cpp``,
  ``time_limit_s`` (default 6, LiveCodeBench), ``memory_mb`` (default 1024), optional ``checker``
  (source of a C++ checker run as ``checker input expected output``), ``compare``: ``tokens`` (default) |
  ``lines``, ``stop_on_failure`` (default true). NeMo-Gym ``unit_tests: {inputs, outputs}`` is accepted.
- ``pairwise_judge``: rows compared two responses at a time through ``recipe.rewards.pairwise_judges``
  (``make_judge(kind).compare(prompt, a, b)``); ``verify``/``verify_batch`` refuse such rows with an
  explanation instead of scoring them 0.
Every spec also accepts ``mode`` (overrides the record's ``mode``) and, for ``math``, ``timeout_s``.
"""
from __future__ import annotations

from typing import Any

_MISSING = object()


class FieldError(Exception):
    """A record field is missing or invalid; carries the reason string verifiers return."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def require(spec: dict, name: str, types: type | tuple[type, ...] | None = None, default: Any = _MISSING) -> Any:
    value = spec.get(name, _MISSING) if isinstance(spec, dict) else _MISSING
    if value is _MISSING or value is None:
        if default is not _MISSING:
            return default
        raise FieldError(f"missing_field:{name}", f"verifier field {name!r} is missing")
    if types is not None and not isinstance(value, types):
        raise FieldError(f"invalid_field:{name}", f"verifier field {name!r} has type {type(value).__name__}")
    return value
