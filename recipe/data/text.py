"""Text normalisation shared by exact dedup, near-dedup and decontamination.

One tokenizer for all three: Unicode-aware lowercase word tokens (``\\w+``), so punctuation, whitespace and
case differences do not hide a duplicate or a leaked eval item. Exact-dedup keys hash the token sequence of
every turn with its role. Not covered: tokenizer-level (BPE) n-grams or semantic duplicates.
"""
from __future__ import annotations

import hashlib
import re

from recipe.data.record import content_text

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lowercase word tokens of ``text``."""
    return _WORD.findall(text.lower())


def exact_key(record: dict) -> str:
    """Hex digest of the normalised conversation (role + word tokens of each turn)."""
    h = hashlib.blake2b(digest_size=16)
    for m in record.get("messages") or ():
        h.update(str(m.get("role")).encode())
        h.update(b"\x1f")
        h.update(" ".join(words(content_text(m.get("content")))).encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()
