"""Derived seeds: every random stream (a training step, a validation domain, a tiny-domain generator) gets its
own seed from the run seed and a few tags, so resuming, re-running or reordering work never shifts another stream.

>>> derive_seed(0, "if_rl", 3) == derive_seed(0, "if_rl", 3) != derive_seed(0, "if_rl", 4)
True
"""
from __future__ import annotations

import hashlib


def derive_seed(*parts: object, nbytes: int = 4) -> int:
    """A deterministic integer from ``parts`` (joined with '|' and hashed with sha256)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:nbytes], "big")
