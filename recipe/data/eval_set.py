"""Evaluation sets for decontamination: the items of evaluation files, each labelled with its benchmark.

:class:`EvalSet` holds ``(benchmark, item_id, text)`` triples and where each benchmark was read; its
:meth:`EvalSet.index` is the :class:`~recipe.data.decontam.NgramIndex` the curation checks rows against. Named
benchmarks are read through their evaluation suites by ``recipe.eval.decontam_items`` (a layer above this one);
:func:`eval_items_from_file` here is the generic reader for a file of no named benchmark: ``prompt`` /
``question`` / ``problem`` / ``input`` / ``text`` fields, NeMo-Gym rows, chat messages, or plain text lines. A file
that yields no item is an error naming it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from recipe.data.decontam import NgramIndex
from recipe.data.record import content_text


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
        return "\n".join(content_text(m.get("content")) for m in msgs if isinstance(m, dict) and m.get("role") != "assistant")
    return None


def read_eval_rows(path: str | Path) -> list:
    """The rows of an evaluation file: JSONL (also ``.txt`` whose every line is JSON), a JSON list (or an object
    holding one under ``input``/``rows``), CSV, Parquet, or plain text with one item per line. ``ValueError`` naming
    the file (and line) on a missing file or bad JSON."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"decontamination set {p} does not exist; pass an existing JSONL/JSON/CSV/Parquet/txt file")
    if p.suffix in (".csv", ".parquet"):
        import pandas as pd
        df = pd.read_csv(p, dtype=str, keep_default_na=False) if p.suffix == ".csv" else pd.read_parquet(p)
        return df.to_dict(orient="records")
    raw = p.read_text(encoding="utf-8", errors="replace")
    if p.suffix == ".json":
        data = json.loads(raw)
        return data if isinstance(data, list) else data.get("input") or data.get("rows") or [data]
    lines = [(i, line) for i, line in enumerate(raw.split("\n")) if line.strip()]
    rows = []
    for i, line in lines:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            if p.suffix == ".txt":  # plain text, one item per line
                return [line for _, line in lines]
            raise ValueError(f"{p}:{i + 1}: not valid JSON ({e.msg}); eval files must be clean") from None
    return rows


def eval_items_from_file(path: str | Path) -> list[tuple[str, str]]:
    """``(item_id, text)`` pairs from an eval file read with the generic fields of ``_item_text``; a file that yields
    no item is a ``ValueError`` naming it (a benchmark in its own field names is read by its evaluation suite:
    ``recipe.eval.decontam_items``)."""
    p = Path(path)
    items: list[tuple[str, str]] = []
    for i, r in enumerate(read_eval_rows(p)):
        text = _item_text(r)
        if text:
            key = r.get("key", r.get("id", i)) if isinstance(r, dict) else i
            items.append((f"{p.name}:{key}", text))
    if not items:
        raise ValueError(no_items_message(p))
    return items


def no_items_message(path: str | Path, detail: str = "") -> str:
    return (f"{path}: no evaluation item read{detail}; the file would decontaminate nothing. Name its benchmark "
            f"(`BENCHMARK=PATH`, e.g. livecodebench=FILE) so the evaluation suite reads it, or fix the file")


@dataclass
class EvalSet:
    """Evaluation items to decontaminate against: ``(benchmark, item_id, text)`` triples, and per benchmark where
    it was read (``{benchmark, path, sha256, items, ...}``)."""
    items: list[tuple[str, str, str]] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)

    def add(self, benchmark: str, items: list[tuple[str, str]], source: dict) -> None:
        self.items.extend((benchmark, i, t) for i, t in items)
        self.sources.append({"benchmark": benchmark, **source, "items": len(items)})

    def index(self, n: int = 13) -> NgramIndex:
        """The n-gram index, each benchmark its own group (its shared template left out)."""
        return NgramIndex.build(((i, t) for _, i, t in self.items), n, groups=[g for g, _, _ in self.items],
                                drop_shared=True)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def eval_set_from_files(files: Iterable[str | Path]) -> EvalSet:
    """The generic reader over ``files`` (each file is its own benchmark, labelled by its name)."""
    out = EvalSet()
    for f in files:
        out.add(Path(f).name, eval_items_from_file(f), {"path": str(f), "sha256": file_sha256(f), "reader": "generic"})
    return out


def build_index(files: Iterable[str | Path], n: int = 13) -> NgramIndex:
    """Index of the items of ``files`` (each file is its own group: a template shared by its items is left out)."""
    return eval_set_from_files(files).index(n)
