"""The local data phase on NVIDIA's released data (``domains.generator: released``): the normalized records that
``recipe hub download`` + ``recipe data curate --out DIR`` wrote (``DIR/records/{train,validation}.jsonl``), split by
record domain into the files the stages read (``<domain>_{train,val,select}.jsonl``).

Curation's validation split becomes the report split (``val``) and the teacher-selection split (``select``): each
validation record goes to one of them by a seeded hash of its id (``select_share`` of them to ``select``), so the
two stay disjoint and the assignment does not depend on file order. Training records keep curation's split.
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.seeding import derive_seed


def _records(path: Path) -> list[dict]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no curated records; run `recipe data curate --out {path.parents[1]}` on "
                                f"the downloaded releases first")
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def released_splits(folder: str | Path, names: list[str], seed: int,
                    select_share: float = 0.5) -> dict[str, dict[str, list[dict]]]:
    """{domain: {"train", "val", "select": records}} for ``names``; a named domain without records is an error."""
    root = Path(folder) / "records"
    out = {n: {"train": [], "val": [], "select": []} for n in names}
    for r in _records(root / "train.jsonl"):
        if r.get("domain") in out:
            out[r["domain"]]["train"].append(r)
    for r in _records(root / "validation.jsonl"):
        if r.get("domain") in out:
            to_select = derive_seed(seed, "released-select", str(r["id"]), nbytes=8) % 10_000 < select_share * 10_000
            out[r["domain"]]["select" if to_select else "val"].append(r)
    empty = [n for n, s in out.items() if not s["train"] or not s["val"]]
    if empty:
        raise ValueError(f"{root}: no train or validation records for domain(s) {', '.join(empty)}; domains.names "
                         f"must name domains of the curated records")
    return out
