"""Name → verifier registry (names are the ``verifier.name`` keys of data records and stage configs).

An unknown name is a configuration error and raises ``UnknownVerifierError`` (before any rollout is
scored: call ``check_verifier_names`` on a dataset up front). Only the response's own failures and bad
record fields score 0 (STYLE.md "Verifiers"; NeMo-RL's math_environment turns config mistakes into silent
zeros, which this registry exists to avoid).

Each verifier module registers its names with ``register`` when it is imported; the package ``recipe.rewards``
imports them all, so whoever imports anything of the package finds every verifier here, and this module imports none
of them.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from recipe.rewards.result import VerifierResult

Verifier = Callable[[dict, Any], VerifierResult]

_REGISTRY: dict[str, Verifier] = {}


class UnknownVerifierError(KeyError):
    """A verifier name that no module registered: a config or data error, never a zero reward."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


def register(name: str) -> Callable[[Verifier], Verifier]:
    def deco(fn: Verifier) -> Verifier:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"verifier name {name!r} registered twice ({_REGISTRY[name].__module__} and {fn.__module__})")
        _REGISTRY[name] = fn
        fn.verifier_name = name  # type: ignore[attr-defined]
        return fn

    return deco


def get_verifier(name: str) -> Verifier:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownVerifierError(
            f"unknown verifier {name!r}; known verifiers: {', '.join(sorted(_REGISTRY))}. "
            "Fix the record's verifier.name (or the stage config) to one of these."
        ) from None


def verifier_names() -> list[str]:
    return sorted(_REGISTRY)


def check_verifier_names(records: Iterable[dict]) -> None:
    """Raise ``UnknownVerifierError`` if any record names a verifier that does not exist."""
    for rec in records:
        spec = rec.get("verifier") if isinstance(rec, dict) else None
        if isinstance(spec, dict) and "name" in spec:
            get_verifier(spec["name"])
