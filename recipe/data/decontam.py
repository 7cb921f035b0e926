"""Decontamination: drop training rows that share word n-grams (13 by default) with evaluation items.

The eval side is an :class:`NgramIndex` built once from evaluation files (JSONL rows of IFEval / IFBench /
NeMo-Gym / chat / normalized records, JSON lists, or plain text with one item per line; see
:func:`eval_items_from_file`). A row is contaminated when at least ``min_overlap`` of its n-grams occur in
the index; the report names the first eval item matched.

Speed (benchmarks/bench_curation.py): tokens are mapped to ids of the *eval* vocabulary (a token the eval
sets never use cannot be part of a shared n-gram, so such windows are skipped), a whole batch of rows is
concatenated and n-gram hashes are computed with a vectorised 64-bit polynomial hash, screened with a
bitmap of the eval hashes (>= 8 buckets per eval n-gram), and the survivors are looked up with
``numpy.searchsorted`` in the sorted eval hashes. Hashes are deterministic (no Python ``hash``), so the
index can be shipped to Ray workers. A 64-bit collision between distinct n-grams is possible in principle
(~n_rows·n_eval_ngrams / 2^64) and is not re-checked.
Not covered: eval items shorter than ``n`` words (counted as ``too_short`` in the index stats) and
paraphrased leaks.
"""
from __future__ import annotations

import json
import math
from itertools import chain, repeat
from pathlib import Path
from typing import Iterable

import numpy as np

from recipe.data.text import words

_P = np.uint64(1099511628211)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier for the bitmap pre-filter  # FNV prime, odd: the polynomial hash stays a bijection per position


def _window_hashes(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Polynomial hashes of every length-``n`` window of ``ids`` and a mask of windows with no unknown (0) id."""
    m = len(ids) - n + 1
    if m <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, bool)
    h = np.zeros(m, np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            h = h * _P + ids[k:k + m]
    unknown = np.concatenate(([0], np.cumsum(ids == 0)))
    valid = (unknown[n:n + m] - unknown[:m]) == 0
    return h, valid


class NgramIndex:
    """Sorted 64-bit hashes of the eval items' word n-grams, with the eval item of each hash."""

    def __init__(self, n: int = 13):
        self.n = n
        self.vocab: dict[str, int] = {}
        self.hashes = np.zeros(0, np.uint64)
        self.owner = np.zeros(0, np.int64)
        self.item_ids: list[str] = []
        self.too_short = 0

    @classmethod
    def build(cls, items: Iterable[tuple[str, str]], n: int = 13) -> "NgramIndex":
        """Index ``(item_id, text)`` pairs."""
        idx = cls(n)
        hs, owners = [], []
        for item_id, text in items:
            toks = words(text)
            k = len(idx.item_ids)
            idx.item_ids.append(item_id)
            if len(toks) < n:
                idx.too_short += 1
                continue
            ids = np.fromiter((idx.vocab.setdefault(t, len(idx.vocab) + 1) for t in toks), np.uint64, len(toks))
            h, _ = _window_hashes(ids, n)
            hs.append(h)
            owners.append(np.full(len(h), k, np.int64))
        if hs:
            allh, allo = np.concatenate(hs), np.concatenate(owners)
            order = np.argsort(allh, kind="stable")
            idx.hashes, idx.owner = allh[order], allo[order]
        return idx

    def __len__(self) -> int:
        return len(self.item_ids)

    def stats(self) -> dict:
        return {"items": len(self.item_ids), "ngrams": int(len(self.hashes)), "n": self.n,
                "too_short": self.too_short, "vocab": len(self.vocab)}

    def _bitmap(self) -> np.ndarray:
        """Membership pre-filter: one bool per bucket of the mixed hash (>= 8 buckets per eval n-gram)."""
        bm = getattr(self, "_bm", None)
        if bm is None:
            bits = int(min(26, max(16, math.ceil(math.log2(max(len(self.hashes), 1) * 8)))))
            self._bits = bits
            bm = np.zeros(1 << bits, bool)
            bm[self._bucket(self.hashes)] = True
            self._bm = bm
        return bm

    def _bucket(self, h: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((h * _MIX) >> np.uint64(64 - self._bits)).astype(np.int64)

    def check_batch(self, texts: list[str], min_overlap: int = 1) -> list[str | None]:
        """For each text, the id of an eval item it overlaps (>= ``min_overlap`` n-grams) or ``None``."""
        out: list[str | None] = [None] * len(texts)
        if not len(self.hashes) or not texts:
            return out
        bm = self._bitmap()
        toks = [words(t) for t in texts]
        lens = np.fromiter(map(len, toks), np.int64, len(toks))
        flat = list(chain.from_iterable(toks))
        ids = np.fromiter(map(self.vocab.get, flat, repeat(0)), np.uint64, len(flat))
        ends = np.cumsum(lens)
        ids = np.insert(ids, ends, np.uint64(0))  # separator after each row: windows never cross rows
        starts = ends - lens + np.arange(len(lens))
        h, valid = _window_hashes(ids, self.n)
        where = np.flatnonzero(valid)
        if not len(where):
            return out
        q = h[where]
        pre = bm[self._bucket(q)]
        where, q = where[pre], q[pre]
        if not len(q):
            return out
        j = np.searchsorted(self.hashes, q)
        j[j == len(self.hashes)] = 0
        hit = self.hashes[j] == q
        if not hit.any():
            return out
        hit_pos, hit_j = where[hit], j[hit]
        row = np.searchsorted(starts, hit_pos, side="right") - 1
        rows, first_idx, counts = np.unique(row, return_index=True, return_counts=True)
        for r, fi, c in zip(rows.tolist(), first_idx.tolist(), counts.tolist()):
            if c >= min_overlap:
                out[r] = self.item_ids[int(self.owner[hit_j[fi]])]
        return out


def _item_text(obj: object) -> str | None:
    """Prompt text of one eval item: IFEval/IFBench ``prompt``, ``question``/``problem``, NeMo-Gym input, messages."""
    if isinstance(obj, str):
        return obj
    if not isinstance(obj, dict):
        return None
    for k in ("prompt", "question", "problem", "input", "text"):
        if isinstance(obj.get(k), str):
            return obj[k]
    rcp = obj.get("responses_create_params")
    msgs = rcp.get("input") if isinstance(rcp, dict) else obj.get("messages")
    if isinstance(msgs, str):
        return msgs
    if isinstance(msgs, list):
        from recipe.data.record import content_text
        return "\n".join(content_text(m.get("content")) for m in msgs if isinstance(m, dict) and m.get("role") != "assistant")
    return None


def eval_items_from_file(path: str | Path) -> list[tuple[str, str]]:
    """``(item_id, text)`` pairs from an eval file; raises ``ValueError`` naming the file and line on bad input."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"decontamination set {p} does not exist; pass an existing JSONL/JSON/txt file")
    raw = p.read_text(encoding="utf-8", errors="replace")
    items: list[tuple[str, str]] = []
    if p.suffix == ".txt":
        return [(f"{p.name}:{i}", line) for i, line in enumerate(raw.splitlines()) if line.strip()]
    if p.suffix == ".json":
        data = json.loads(raw)
        rows = data if isinstance(data, list) else data.get("input") or data.get("rows") or [data]
    else:
        rows = []
        for i, line in enumerate(raw.splitlines()):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{p}:{i + 1}: not valid JSON ({e.msg}); eval files must be clean") from None
    for i, r in enumerate(rows):
        text = _item_text(r)
        if text:
            key = r.get("key", r.get("id", i)) if isinstance(r, dict) else i
            items.append((f"{p.name}:{key}", text))
    return items


def build_index(files: Iterable[str | Path], n: int = 13) -> NgramIndex:
    items: list[tuple[str, str]] = []
    for f in files:
        items.extend(eval_items_from_file(f))
    return NgramIndex.build(items, n)
