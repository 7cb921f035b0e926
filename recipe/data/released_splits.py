"""The local data phase on NVIDIA's released data (``domains.generator: released``): the normalized records that
``recipe hub download`` + ``recipe data curate --out DIR`` wrote (``DIR/records/{train,validation}.jsonl``), split by
record domain into the files the stages read (``<domain>_{train,val,select}.jsonl``).

Curation's validation split becomes the report split (``val``) and the teacher-selection split (``select``): each
validation record goes to one of them by a seeded hash of its prompt (:func:`recipe.data.text.prompt_key`, the user
turns; ``select_share`` of them to ``select``), so the two stay disjoint, records with one prompt stay together and
the assignment does not depend on file order. Training records keep curation's split, which also hashes the prompt:
across every domain and both SFT and RL rows, no prompt is in training and in ``val`` / ``select``
(:func:`held_out_overlap` counts them; a curated folder with any is refused).
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.data.text import prompt_key
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
    train, held = _records(root / "train.jsonl"), _records(root / "validation.jsonl")
    shared = held_out_overlap(train, held)
    if shared:
        raise ValueError(f"{root}: {shared} prompts are in both train.jsonl and validation.jsonl (a curation that split "
                         f"by record, not by prompt); curate again with `recipe data curate`")
    for r in train:
        if r.get("domain") in out:
            out[r["domain"]]["train"].append(r)
    for r in held:
        if r.get("domain") in out:
            to_select = derive_seed(seed, "released-select", prompt_key(r), nbytes=8) % 10_000 < select_share * 10_000
            out[r["domain"]]["select" if to_select else "val"].append(r)
    empty = [n for n, s in out.items() if not s["train"] or not s["val"]]
    if empty:
        raise ValueError(f"{root}: no train or validation records for domain(s) {', '.join(empty)}; domains.names "
                         f"must name domains of the curated records")
    return out


def held_out_overlap(train: list[dict], held: list[dict]) -> int:
    """Distinct prompts (:func:`recipe.data.text.prompt_key`) of ``held`` that are also prompts of ``train``."""
    train_keys = {prompt_key(r) for r in train}
    return len({prompt_key(r) for r in held} & train_keys)
