"""Exact and near-duplicate removal, within and across sources (first occurrence wins).

- Exact: :func:`recipe.data.text.exact_key` (role + lowercase whitespace-collapsed text of every turn), in a set.
- Near: MinHash LSH from ``datasketch`` (a maintained library): ``shingle_words``-grams of word and symbol
  tokens (:func:`recipe.data.text.symbol_words`), ``num_perm``
  permutations, estimated-Jaccard ``threshold``. Signatures are computed per batch (stateless, so the Ray
  path computes them on workers with :func:`minhash_signatures`) and the LSH query/insert runs in order in
  one place (:class:`Deduper`), so results are deterministic and identical across backends.
``scope="per_source"`` keys both indexes by source name (duplicates across sources are then kept).
LSH candidates are confirmed with the estimated Jaccard (share of equal signature slots) before a row is
dropped. Not covered: datasketch's in-memory LSH (and the kept signatures) hold every kept row's band keys; at the paper's ~25M SFT rows
this needs tens of GB (use datasketch's Redis storage or run per config; see data_cards/README.md).
"""
from __future__ import annotations

import numpy as np
import xxhash
from datasketch import LeanMinHash, MinHash, MinHashLSH

from recipe.data.text import symbol_words


SCHEME = "affine32"  # datasketch 2.x permutation scheme; signatures from minhash_signatures use it


SIG_DTYPE = MinHash(num_perm=16, scheme=SCHEME).hashvalues.dtype  # dtype of signatures under SCHEME


def _h32(b: bytes) -> int:
    return xxhash.xxh32_intdigest(b)


def shingles(text: str, k: int) -> list[bytes]:
    toks = symbol_words(text)
    if len(toks) <= k:
        return [" ".join(toks).encode("utf-8", "surrogatepass")]
    return [" ".join(toks[i:i + k]).encode("utf-8", "surrogatepass") for i in range(len(toks) - k + 1)]


def minhash_signatures(texts: list[str], *, num_perm: int, shingle_words: int, seed: int = 1) -> list[np.ndarray]:
    """MinHash signatures (uint64 arrays of length ``num_perm``) for a batch of texts."""
    sets = [shingles(t, shingle_words) for t in texts]
    return [m.hashvalues for m in MinHash.bulk(sets, num_perm=num_perm, seed=seed, hashfunc=_h32, scheme=SCHEME)]


class Deduper:
    """Stateful exact + near dedup; :meth:`check` returns ``(reason, duplicate_of)`` or ``(None, None)``."""

    def __init__(self, *, exact: bool = True, near: bool = True, threshold: float = 0.8, num_perm: int = 128,
                 scope: str = "global", seed: int = 1):
        self.exact, self.near, self.scope, self.seed, self.num_perm = exact, near, scope, seed, num_perm
        self._seen: dict[tuple[str, str], str] = {}
        self._lsh: dict[str, MinHashLSH] = {}
        self._sigs: dict[str, np.ndarray] = {}
        self._threshold = threshold

    def _scope_key(self, source: str) -> str:
        return source if self.scope == "per_source" else ""

    def check(self, rid: str, source: str, key: str, signature: np.ndarray | None) -> tuple[str | None, str | None]:
        sk = self._scope_key(source)
        if self.exact:
            prev = self._seen.get((sk, key))
            if prev is not None:
                return "exact_duplicate", prev
        if self.near and signature is not None:
            lsh = self._lsh.get(sk)
            if lsh is None:
                lsh = self._lsh[sk] = MinHashLSH(threshold=self._threshold, num_perm=self.num_perm)
            mh = LeanMinHash(seed=self.seed, hashvalues=signature, scheme=SCHEME)
            # LSH returns band collisions; confirm with the estimated Jaccard so pairs below the threshold stay
            sig = np.asarray(signature)
            for cand in sorted(lsh.query(mh)):
                if float(np.mean(self._sigs[cand] == sig)) >= self._threshold:
                    return "near_duplicate", cand
            lsh.insert(rid, mh, check_duplication=False)
            self._sigs[rid] = sig
        if self.exact:
            self._seen[(sk, key)] = rid
        return None, None
