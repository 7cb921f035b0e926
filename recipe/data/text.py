"""Text normalisation shared by exact dedup, near-dedup and decontamination.

One tokenizer for all three: Unicode-aware lowercase word tokens, so punctuation, whitespace and
case differences do not hide a duplicate or a leaked eval item. Exact-dedup keys hash the token sequence of
every turn with its role. Not covered: tokenizer-level (BPE) n-grams or semantic duplicates.
"""
from __future__ import annotations

import hashlib
import sys
import unicodedata

from recipe.data.record import content_text

# Every punctuation, symbol, separator and control character of the BMP becomes a space; a word is then a
# maximal run of letters, marks and digits (and "_"). Same tokens as the regex \w+ on ASCII text, ~2x faster.
_SPACE = str.maketrans({chr(c): " " for c in range(min(sys.maxunicode, 0xFFFF) + 1)
                        if unicodedata.category(chr(c))[0] in "PSZC" and chr(c) != "_"})


def words(text: str) -> list[str]:
    """Lowercase word tokens of ``text`` (runs of letters, marks, digits and ``_``)."""
    return text.lower().translate(_SPACE).split()


def exact_key(record: dict) -> str:
    """Hex digest of the normalised conversation (role + word tokens of each turn)."""
    h = hashlib.blake2b(digest_size=16)
    for m in record.get("messages") or ():
        h.update(str(m.get("role")).encode())
        h.update(b"\x1f")
        h.update(" ".join(words(content_text(m.get("content")))).encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()
