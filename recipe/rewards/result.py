"""The one result type every verifier returns.

A verifier turns (record, response) into a ``VerifierResult``: a score in [0, 1], a short
machine-readable ``reason`` (``correct``, ``wrong_answer``, ``no_answer``, ``unterminated_think``,
``missing_field:<name>``, ``invalid_field:<name>``, ``bad_response``, ``timeout``, ``error:<Type>`` ...)
and a ``details`` dict (JSON-serialisable: extracted answer, per-instruction booleans, per-test verdicts).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class VerifierResult:
    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = float(self.score)
        if not (0.0 <= s <= 1.0) or s != s:
            raise ValueError(f"VerifierResult.score must lie in [0, 1], got {self.score!r}")
        object.__setattr__(self, "score", s)

    @property
    def correct(self) -> bool:
        return self.score >= 1.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "VerifierResult":
        return cls(score=d["score"], reason=d["reason"], details=dict(d.get("details") or {}))


def fail(reason: str, **details: Any) -> VerifierResult:
    """A zero-score result (the response's own failure or a bad field of the record)."""
    return VerifierResult(0.0, reason, details)


def ok(**details: Any) -> VerifierResult:
    return VerifierResult(1.0, "correct", details)


def binary(passed: bool, fail_reason: str = "wrong_answer", **details: Any) -> VerifierResult:
    return VerifierResult(1.0 if passed else 0.0, "correct" if passed else fail_reason, details)
