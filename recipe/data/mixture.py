"""Train/validation split and per-stage prompt pools (domain mixtures), deterministic by seed.

- Split: a record is in ``validation`` when ``blake2b(f"{seed}:{id}")`` falls below ``validation_fraction``;
  ids are unique after curation and exact/near duplicates are already gone, so the splits cannot share a
  row or a normalised text (tested).
- Pools: for a stage, ``weights`` (domain -> weight, normalised) and an optional ``size``. Counts per
  domain use largest-remainder rounding; without ``size`` the pool is the largest one the weights allow
  without repeating a row. Rows are drawn without replacement after a seeded shuffle of the domain's rows
  sorted by id. A domain with too few (or no) rows is reported as a shortfall, never padded by repetition.
  Paper compositions (RECIPE.md §4.1, §7.2): multi-domain RL 55/30/15 (MCQA / workplace tool calls /
  structured output), MOPD 1,853 math / 1,854 IF / 610 workplace / 927 MCQA / 927 structured output plus
  the RLHF prompts that were not released (profile ``paper`` records the share it picks).
"""
from __future__ import annotations

import hashlib
import math
import random

from recipe.config.data_section import StagePool


def split_of(record_id: str, *, seed: int, validation_fraction: float) -> str:
    h = int.from_bytes(hashlib.blake2b(f"{seed}:{record_id}".encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return "validation" if h / 2**64 < validation_fraction else "train"


def _counts(weights: dict[str, float], size: int) -> dict[str, int]:
    total = sum(weights.values())
    exact = {d: size * w / total for d, w in weights.items()}
    counts = {d: int(math.floor(x)) for d, x in exact.items()}
    rest = size - sum(counts.values())
    for d in sorted(exact, key=lambda d: (-(exact[d] - counts[d]), d))[:rest]:
        counts[d] += 1
    return counts


def build_pool(by_domain: dict[str, list[dict]], pool: StagePool, *, seed: int, stage: str) -> tuple[list[dict], dict]:
    """``(rows, info)``: the stage's pool and ``{"counts", "target", "shortfall", "missing_domains", "size"}``."""
    weights = {d: w for d, w in pool.weights.items() if w > 0}
    available = {d: len(by_domain.get(d, [])) for d in weights}
    missing = sorted(d for d, n in available.items() if n == 0)
    if pool.size is None:
        present = {d: w for d, w in weights.items() if available[d] > 0}
        total = sum(present.values())
        size = min((int(available[d] * total / w) for d, w in present.items()), default=0)
        target = _counts(present, size) if present else {}
        target.update({d: 0 for d in missing})
    else:
        target = _counts(weights, pool.size)
    rng = random.Random(f"{seed}:{stage}")
    rows: list[dict] = []
    counts: dict[str, int] = {}
    for d in sorted(target):
        cand = sorted(by_domain.get(d, []), key=lambda r: r["id"])
        rng.shuffle(cand)
        take = cand[:target[d]]
        counts[d] = len(take)
        rows.extend(take)
    rng.shuffle(rows)
    shortfall = {d: target[d] - counts[d] for d in target if counts[d] < target[d]}
    return rows, {"size": len(rows), "target": target, "counts": counts, "shortfall": shortfall,
                  "missing_domains": missing, "weights": pool.weights, "note": pool.note}
