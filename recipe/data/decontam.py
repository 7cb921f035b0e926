"""Decontamination: drop training rows that share word n-grams (13 by default) with evaluation items.

The eval side is an :class:`NgramIndex` built once from evaluation items, each labelled with its benchmark.
Benchmarks are read through their evaluation suites (``recipe.eval.decontam_items``: the user turns the model is
shown), so every suite is covered in its own field names; ``recipe.data.eval_set`` holds the items and the
generic reader for files of no named benchmark. A source that yields no item is an error naming it. N-grams
shared by two items of one benchmark are its template, not an item, and are not indexed (``drop_shared``). A row
is contaminated when at least ``min_overlap`` of its n-grams occur in the index; the report names the first eval
item matched. Words are those of :func:`recipe.data.text.words` (lowercase runs of letters, digits, marks, ``_``).

Speed (benchmarks/bench_curation.py, target >= 100k rows/s per core): a batch of rows is processed as one byte
array with numpy, creating no Python object per word. ASCII rows are lowercased and split at non-word bytes by
a 256-entry table; other rows are first normalised by ``words()`` (so Unicode punctuation splits the same way).
Each word gets a 64-bit polynomial hash of its UTF-8 bytes (prefix sums with the modular inverse of the base,
wrapping uint64 arithmetic), each window of ``n`` words a polynomial hash of the word hashes; windows are
screened with a bitmap of the eval hashes (>= 8 buckets per eval n-gram) and the survivors looked up with
``numpy.searchsorted`` in the sorted eval hashes. Hashes are deterministic (no Python ``hash``), so the index
can be shipped to Ray workers.

Exactness: every hash hit is re-verified by comparing the row's ``n`` words with the eval n-gram's words, so a
hash collision (of words or of n-grams) can never drop a clean row (tests/test_decontam.py forces one).
Not covered: eval items shorter than ``n`` words (counted as ``too_short`` in the index stats) and
paraphrased leaks.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from recipe.data.text import words

_P = np.uint64(1099511628211)          # FNV prime (odd, so invertible mod 2^64): per-byte word hash base
_P_INV = np.uint64(pow(1099511628211, -1, 1 << 64))
_Q = np.uint64(0x100000001B3 * 31 + 2)  # odd base of the n-gram hash over word hashes
_Q_INV = np.uint64(pow(int(_Q), -1, 1 << 64))
_MIX = np.uint64(0x9E3779B97F4A7C15)   # Fibonacci hashing multiplier for the bitmap pre-filter
# ASCII bytes that belong to a word after lowercasing (letters, digits, "_"); bytes >= 128 only occur in rows
# already normalised by words() (words joined by spaces), where every non-space byte is a word byte.
_WORD_BYTE = np.array([chr(c).isalnum() or chr(c) == "_" if c < 128 else True for c in range(256)], bool)
_POW_CACHE: dict[str, np.ndarray] = {}


def _powers(name: str, base: np.uint64, n: int) -> np.ndarray:
    """base**0 .. base**(n-1) mod 2^64, cached and grown on demand."""
    have = _POW_CACHE.get(name)
    if have is None or len(have) < n:
        size = max(n, 2 * len(have) if have is not None else 1 << 16)
        out = np.empty(size, np.uint64)
        out[0] = 1
        with np.errstate(over="ignore"):
            step = 1
            while step < size:  # doubling: out[step:2step] = out[:step] * base**step
                k = min(step, size - step)
                out[step:step + k] = out[:k] * (out[step - 1] * base)
                step += k
        _POW_CACHE[name] = have = out
    return have[:n]


def _batch_words(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every word of every text, in order, and the index of each text's first word (+ the total)."""
    enc = [t.lower().encode("ascii") if t.isascii() else " ".join(words(t)).encode("utf-8") for t in texts]
    buf = np.frombuffer(b"\n".join(enc), np.uint8)
    bounds = np.zeros(len(enc) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, enc), np.int64, len(enc)) + 1, out=bounds[1:])  # byte where each text starts
    if not len(buf):
        return np.zeros(0, np.uint64), np.zeros(len(enc) + 1, np.int64)
    edge = np.diff(_WORD_BYTE[buf].view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)  # word = buf[start:end]
    with np.errstate(over="ignore"):
        # S[i] = sum_{j<i} b_j * P^-j, so the word b_s..b_{e-1} hashes to (S[e] - S[s]) * P^(e-1) = sum b_j P^(e-1-j)
        s = np.zeros(len(buf) + 1, np.uint64)
        np.cumsum(buf * _powers("p_inv", _P_INV, len(buf)), out=s[1:])
        h = (s[ends] - s[starts]) * _powers("p", _P, len(buf))[ends - 1]
    return h, np.searchsorted(starts, bounds)


def _window_hashes(word_h: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of ``n`` consecutive words (windows across two texts included: see check_batch)."""
    m = len(word_h) - n + 1
    if m <= 0:
        return np.zeros(0, np.uint64)
    with np.errstate(over="ignore"):  # prefix sums with Q^-j, as for the words: sum_k w_{i+k} Q^(n-1-k)
        s = np.zeros(len(word_h) + 1, np.uint64)
        np.cumsum(word_h * _powers("q_inv", _Q_INV, len(word_h)), out=s[1:])
        return (s[n:] - s[:m]) * _powers("q", _Q, len(word_h))[n - 1:]


def _shared_within_group(h: np.ndarray, owner: np.ndarray, groups: list[str]) -> np.ndarray:
    """Mask of the n-gram entries whose hash occurs in two or more distinct items of the entry's group."""
    gid = np.unique(np.asarray(groups, dtype=object), return_inverse=True)[1].reshape(-1)[owner]
    shared = np.zeros(len(h), bool)
    for g in np.unique(gid):
        sel = np.flatnonzero(gid == g)
        order = np.lexsort((owner[sel], h[sel]))  # by hash, then item
        hs, os_ = h[sel][order], owner[sel][order]
        new_hash = np.r_[True, hs[1:] != hs[:-1]]
        new_pair = new_hash | np.r_[True, os_[1:] != os_[:-1]]
        items_per_hash = np.add.reduceat(new_pair.astype(np.int64), np.flatnonzero(new_hash))
        shared[sel] = np.isin(h[sel], hs[new_hash][items_per_hash >= 2])
    return shared


class NgramIndex:
    """Sorted 64-bit hashes of the eval items' word n-grams, with the eval item and word offset of each hash."""

    def __init__(self, n: int = 13):
        self.n = n
        self.hashes = np.zeros(0, np.uint64)
        self.owner = np.zeros(0, np.int64)
        self.offset = np.zeros(0, np.int64)
        self.item_ids: list[str] = []
        self.item_texts: list[str] = []
        self.item_groups: list[str] = []
        self.too_short = 0
        self.boilerplate_only = 0
        self.n_words = 0
        self.per_group: dict[str, dict[str, int]] = {}

    @classmethod
    def build(cls, items: Iterable[tuple[str, str]], n: int = 13, *, groups: Iterable[str] | None = None,
              drop_shared: bool = False) -> "NgramIndex":
        """Index ``(item_id, text)`` pairs; ``groups`` names each item's benchmark (one label per item).

        ``drop_shared``: an n-gram found in two or more items of one group is the benchmark's prompt template or a
        stock instruction (an evaluation prompt's "put the final answer in \\boxed{}" sentence, IFEval's "your
        entire response should be in English, and in all lowercase letters"), not an item: it is left out, so
        training rows written with the same template are not taken for copies. An item whose every n-gram is
        shared is counted in ``boilerplate_only`` (not covered, like ``too_short``)."""
        idx = cls(n)
        for item_id, text in items:
            idx.item_ids.append(item_id)
            idx.item_texts.append(text)
        idx.item_groups = list(groups) if groups is not None else [""] * len(idx.item_ids)
        if len(idx.item_groups) != len(idx.item_ids):
            raise ValueError(f"{len(idx.item_groups)} group labels for {len(idx.item_ids)} items")
        hs, owners, offsets, vocab = [], [], [], []
        for lo in range(0, len(idx.item_texts), 4096):
            word_h, first = _batch_words(idx.item_texts[lo:lo + 4096])
            vocab.append(np.unique(word_h))
            h = _window_hashes(word_h, n)
            row = np.searchsorted(first, np.arange(len(h)), side="right") - 1
            pos = np.flatnonzero(np.arange(len(h)) + n <= first[row + 1])  # windows inside one item
            hs.append(h[pos])
            owners.append(row[pos] + lo)
            offsets.append(pos - first[row[pos]])
        allh = np.concatenate(hs) if hs else np.zeros(0, np.uint64)
        own = np.concatenate(owners) if owners else np.zeros(0, np.int64)
        off = np.concatenate(offsets) if offsets else np.zeros(0, np.int64)
        before = np.bincount(own, minlength=len(idx.item_ids))
        if drop_shared and len(allh):
            keep = ~_shared_within_group(allh, own, idx.item_groups)
            allh, own, off = allh[keep], own[keep], off[keep]
        after = np.bincount(own, minlength=len(idx.item_ids))
        idx.too_short = int((before == 0).sum())
        idx.boilerplate_only = int(((before > 0) & (after == 0)).sum())
        for g, b, a in zip(idx.item_groups, before.tolist(), after.tolist()):
            st = idx.per_group.setdefault(g, {"items": 0, "too_short": 0, "boilerplate_only": 0})
            st["items"] += 1
            st["too_short"] += b == 0
            st["boilerplate_only"] += b > 0 and a == 0
        idx.n_words = int(len(np.unique(np.concatenate(vocab)))) if vocab else 0
        if len(allh):
            order = np.argsort(allh, kind="stable")
            idx.hashes, idx.owner, idx.offset = allh[order], own[order], off[order]
        return idx

    def group_of(self, item_id: str) -> str:
        """The group (benchmark) label of an indexed item."""
        table = self.__dict__.setdefault("_group_of", {})
        if not table:
            table.update(zip(self.item_ids, self.item_groups))
        return table[item_id]

    def __len__(self) -> int:
        return len(self.item_ids)

    def stats(self) -> dict:
        out = {"items": len(self.item_ids), "ngrams": int(len(self.hashes)), "n": self.n,
               "too_short": self.too_short, "boilerplate_only": self.boilerplate_only, "vocab": self.n_words}
        if any(self.item_groups):
            out["benchmarks"] = {g: dict(v) for g, v in sorted(self.per_group.items())}
        return out

    def _bitmap(self) -> np.ndarray:
        """Membership pre-filter: one bit per bucket of the mixed hash (>= 16 buckets per eval n-gram, packed
        so that the table stays in cache: 2 MiB for 1M eval n-grams)."""
        bm = getattr(self, "_bm", None)
        if bm is None:
            bits = int(min(30, max(16, math.ceil(math.log2(max(len(self.hashes), 1) * 16)))))
            self._bits = bits
            flags = np.zeros(1 << bits, bool)
            flags[self._bucket(self.hashes)] = True
            bm = self._bm = np.packbits(flags, bitorder="little")
        return bm

    def _maybe_member(self, q: np.ndarray) -> np.ndarray:
        bm = self._bitmap()
        b = self._bucket(q)
        return (bm[b >> 3] >> (b & 7).astype(np.uint8)) & 1 == 1

    def _bucket(self, h: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((h * _MIX) >> np.uint64(64 - self._bits)).astype(np.int64)

    def _eval_words(self, item: int) -> list[str]:
        cache = self.__dict__.setdefault("_words_cache", {})
        if item not in cache:
            cache[item] = words(self.item_texts[item])
        return cache[item]

    def _verified_owner(self, row_words: list[str], at: int, lo: int, hi: int) -> int | None:
        """The eval item whose n-gram (hash slots lo..hi-1) equals the row's words at ``at``, else None."""
        gram = row_words[at:at + self.n]
        for k in range(lo, hi):
            o, off = int(self.owner[k]), int(self.offset[k])
            if self._eval_words(o)[off:off + self.n] == gram:
                return o
        return None

    def check_batch(self, texts: list[str], min_overlap: int = 1) -> list[str | None]:
        """For each text, the id of an eval item it overlaps (>= ``min_overlap`` n-grams) or ``None``."""
        out: list[str | None] = [None] * len(texts)
        if not len(self.hashes) or not texts:
            return out
        word_h, first = _batch_words(texts)
        q = _window_hashes(word_h, self.n)
        if not len(q):
            return out
        where = np.flatnonzero(self._maybe_member(q))
        q = q[where]
        lo = np.searchsorted(self.hashes, q)
        hit = self.hashes[np.minimum(lo, len(self.hashes) - 1)] == q
        if not hit.any():
            return out
        # A window that spans two texts has no row of its own (its words run past its row's end); the exact
        # re-check below rejects it like any other hash collision.
        hit_pos, hit_lo = where[hit], lo[hit]
        hit_hi = np.searchsorted(self.hashes, q[hit], side="right")
        hit_row = np.searchsorted(first, hit_pos, side="right") - 1
        verified: dict[int, list[int]] = {}
        row_words: dict[int, list[str]] = {}
        for r, at, a, b in zip(hit_row.tolist(), (hit_pos - first[hit_row]).tolist(), hit_lo.tolist(),
                               hit_hi.tolist()):
            if r not in row_words:
                row_words[r] = words(texts[r])
            o = self._verified_owner(row_words[r], at, a, b)  # exact words: a collision never drops a row
            if o is not None:
                verified.setdefault(r, []).append(o)
        for r, owners in verified.items():
            if len(owners) >= min_overlap:
                out[r] = self.item_ids[owners[0]]
        return out
