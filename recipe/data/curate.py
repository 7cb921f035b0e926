"""The curation pipeline: inputs (files, Hub-layout dirs) -> decontaminated, deduplicated, split training data.

Order per row: read + normalize (bad rows -> quarantine) -> decontamination against the evaluation set
-> exact dedup -> near dedup (MinHash LSH) -> train/validation split -> write. Then per-stage prompt pools
(``data.pools``) are drawn from the kept training prompts. Every row that comes in is accounted for:
``rows_in == kept + sum(dropped.values()) + quarantined`` (checked; a mismatch is a bug and raises).

Outputs in ``out_dir``::

    records/{train,validation}.jsonl   normalized records (recipe.data.record)
    nemo_gym/{train,validation}.jsonl  prompt-only records as NeMo-Gym rows (what NeMo-RL consumes)
    sft/{train,validation}.jsonl       records ending in an assistant turn as SFT chat rows
    pools/<stage>.jsonl                per-stage prompt pools as NeMo-Gym rows
    dropped.jsonl, quarantine.jsonl    one line per dropped / quarantined row with id and reason
    report.json                        counts (see CurationReport) - written last
    README.md                          the dataset card generated from the report (recipe.data.dataset_cards)

The evaluation set is an :class:`~recipe.data.decontam.EvalSet`: the benchmarks of ``data.decontam.benchmarks``
read through their evaluation suites (``recipe.eval.decontam_items.eval_set``, which ``recipe data curate``
passes in), or else the files of ``data.decontam.eval_files`` + ``decontaminate_against`` by the generic reader.
The report counts the rows each benchmark removed.

The split hashes the prompt (:func:`recipe.data.text.prompt_key`: the user turns), not the record, so SFT and RL
rows with one prompt land on the same side; ``held_out_prompt_overlap`` (prompts in both train and validation)
is counted and must be 0.

``backend="inprocess"`` (tiny) or ``"ray"`` (paper, Ray Data) run the same row logic (recipe.data.row_curation).
"""
from __future__ import annotations

import json
import os
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from recipe.config.data_section import DataSection
from recipe.data.backends import run_inprocess, run_ray
import numpy as np

from recipe.data.eval_set import EvalSet, eval_set_from_files, file_sha256
from recipe.data.dedup import Deduper
from recipe.data.formats import to_chat, to_nemo_gym
from recipe.data.loaders import resolve_inputs
from recipe.data.mixture import build_pool, split_of
from recipe.data.record import is_prompt_only
from recipe.data.row_curation import RowContext

DROP_REASONS = ("contaminated", "exact_duplicate", "near_duplicate")


@dataclass
class CurationReport:
    """What ``report.json`` holds. ``dropped`` maps reason -> count; ``quarantined`` is the count and
    ``quarantine`` lists ``{id, source, file, line, reason, detail}`` (capped at ``report_max_listed``)."""
    rows_in: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: {r: 0 for r in DROP_REASONS})
    quarantined: int = 0
    quarantined_by_reason: dict[str, int] = field(default_factory=dict)
    quarantine: list[dict] = field(default_factory=list)
    dropped_rows: list[dict] = field(default_factory=list)
    blank_lines: int = 0
    sources: list[dict] = field(default_factory=list)
    domains: dict[str, dict[str, int]] = field(default_factory=dict)
    splits: dict[str, int] = field(default_factory=lambda: {"train": 0, "validation": 0})
    outputs: dict[str, dict] = field(default_factory=dict)
    pools: dict[str, dict] = field(default_factory=dict)
    no_verifier_prompts: int = 0
    decontamination: dict[str, Any] = field(default_factory=dict)
    held_out_prompt_overlap: int = 0
    dedup: dict[str, Any] = field(default_factory=dict)
    backend: str = "inprocess"
    elapsed_s: float = 0.0
    created_at: str = ""
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def reconciles(self) -> bool:
        return self.rows_in == self.kept + sum(self.dropped.values()) + self.quarantined

    def to_dict(self) -> dict:
        d = asdict(self)
        d["reconciles"] = self.reconciles
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CurationReport":
        d = {k: v for k, v in d.items() if k != "reconciles"}
        return cls(**d)

    @classmethod
    def load(cls, path: str | Path) -> "CurationReport":
        p = Path(path)
        if p.is_dir():
            p = p / "report.json"
        return cls.from_dict(json.loads(p.read_text()))


class _Writers:
    """Lazily opened JSONL files under ``out_dir`` with line counts."""

    def __init__(self, out_dir: Path):
        self.out, self.files, self.counts = out_dir, {}, Counter()

    def write(self, rel: str, obj: dict) -> None:
        f = self.files.get(rel)
        if f is None:
            path = self.out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            f = self.files[rel] = open(path, "w", encoding="utf-8")
        f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.counts[rel] += 1

    def close(self) -> None:
        for f in self.files.values():
            f.close()


def _section(config: Any) -> DataSection:
    if config is None:
        return DataSection()
    if isinstance(config, DataSection):
        return config
    if hasattr(config, "data") and isinstance(config.data, DataSection):
        return config.data
    if isinstance(config, dict):
        return DataSection.model_validate(config.get("data", config))
    raise TypeError(f"config must be a DataSection, a RecipeConfig or None, got {type(config).__name__}")


def _progress(enabled: bool):
    if not enabled:
        return None
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    return Progress(SpinnerColumn(), TextColumn("[bold]curate[/] {task.fields[n]:,} rows"), TimeElapsedColumn(),
                    transient=True)


def curate(inputs: Iterable[str | Path], out_dir: str | Path, *, fmt: str = "auto",
           decontaminate_against: Iterable[str | Path] = (), config: Any = None, backend: str | None = None,
           progress: bool = False, eval_set: EvalSet | None = None) -> CurationReport:
    """Curate ``inputs`` into ``out_dir`` and return the report (also written to ``out_dir/report.json``).
    ``eval_set``: the evaluation items to decontaminate against, read by the caller (then ``decontaminate_against``
    and ``data.decontam.eval_files`` are not read again); required when ``data.decontam.benchmarks`` names any."""
    t0 = time.time()
    data = _section(config)
    backend = backend or data.backend
    if fmt not in ("auto", "nemo_gym", "messages", "normalized"):
        raise ValueError(f"unknown format {fmt!r}: expected auto, nemo_gym, messages or normalized")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("report.json", "README.md", "dropped.jsonl", "quarantine.jsonl"):  # never mix runs' outputs
        (out / stale).unlink(missing_ok=True)
    for sub in ("records", "nemo_gym", "sft", "pools"):
        for f in (out / sub).glob("*.jsonl") if (out / sub).is_dir() else ():
            f.unlink()
    sources = resolve_inputs(list(inputs), data, fmt)
    if eval_set is None:
        if data.decontam.benchmarks:
            raise ValueError(f"data.decontam.benchmarks names benchmarks ({data.decontam.benchmarks}), which are read "
                             "through their evaluation suites: run `recipe data curate`, or pass "
                             "eval_set=recipe.eval.decontam_items.eval_set(config)")
        eval_set = eval_set_from_files([*data.decontam.eval_files, *decontaminate_against])
    index = eval_set.index(data.decontam.ngram)
    removed = Counter()
    held_keys: set[str] = set()
    train_keys: list[int] = []
    ctx = RowContext(max_row_bytes=data.limits.max_row_bytes, max_messages=data.limits.max_messages,
                     index=index, min_overlap=data.decontam.min_overlap, decontam_fields=data.decontam.fields,
                     near=data.dedup.near, num_perm=data.dedup.num_perm, shingle_words=data.dedup.shingle_words)
    dd = data.dedup
    deduper = Deduper(exact=dd.exact, near=dd.near, threshold=dd.threshold, num_perm=dd.num_perm, scope=dd.scope)
    rep = CurationReport(backend=backend, created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         config=data.model_dump(mode="json"))
    per_src: dict[str, Counter] = defaultdict(Counter)
    domains: dict[str, Counter] = defaultdict(Counter)
    seen_ids: set[str] = set()
    pool_rows: dict[str, list[dict]] = defaultdict(list)
    counters: dict = {}
    w = _Writers(out)
    cap = data.report_max_listed
    if backend == "ray":
        stream = run_ray(sources, ctx, data.batch_rows, counters, data.ray_num_cpus)
    elif backend == "inprocess":
        stream = run_inprocess(sources, ctx, data.batch_rows, counters)
    else:
        raise ValueError(f"unknown backend {backend!r}: expected inprocess or ray")
    prog = _progress(progress)
    task = prog.add_task("curate", n=0) if prog else None
    if prog:
        prog.start()
    try:
        for o in stream:
            rep.rows_in += 1
            src = o["source"]
            per_src[src]["rows_in"] += 1
            if prog and rep.rows_in % 1000 == 0:
                prog.update(task, n=rep.rows_in)
            if o["kind"] == "quarantine":
                rep.quarantined += 1
                per_src[src]["quarantined"] += 1
                rep.quarantined_by_reason[o["reason"]] = rep.quarantined_by_reason.get(o["reason"], 0) + 1
                if len(rep.quarantine) < cap:
                    rep.quarantine.append(o)
                w.write("quarantine.jsonl", o)
                continue
            rec = o["record"]
            if rec["id"] in seen_ids:  # the same native id twice (e.g. repeated rows): make it unique, keep going
                base, k = f"{rec['id']}#line{o['line']}", 1
                rec["id"] = base
                while rec["id"] in seen_ids:
                    k += 1
                    rec["id"] = f"{base}.{k}"
            seen_ids.add(rec["id"])
            reason, dup_of = ("contaminated", o["contaminated_by"]) if o.get("contaminated_by") else (None, None)
            if reason:
                removed[index.group_of(dup_of)] += 1
            if reason is None:
                reason, dup_of = deduper.check(rec["id"], src, o["key"], o.get("sig"))
            if reason is not None:
                rep.dropped[reason] += 1
                per_src[src][reason] += 1
                entry = {"id": rec["id"], "source": src, "line": o["line"], "reason": reason,
                         ("matched_eval_item" if reason == "contaminated" else "duplicate_of"): dup_of}
                if len(rep.dropped_rows) < cap:
                    rep.dropped_rows.append(entry)
                w.write("dropped.jsonl", entry)
                continue
            split = split_of(o["prompt_key"], seed=data.split.seed, validation_fraction=data.split.validation_fraction)
            if split == "train":
                train_keys.append(int(o["prompt_key"][:16], 16))
            else:
                held_keys.add(o["prompt_key"][:16])
            rep.kept += 1
            per_src[src]["kept"] += 1
            rep.splits[split] += 1
            domains[rec["domain"]][split] += 1
            w.write(f"records/{split}.jsonl", rec)
            if is_prompt_only(rec):
                w.write(f"nemo_gym/{split}.jsonl", to_nemo_gym(rec))
                if rec.get("verifier") is None:
                    rep.no_verifier_prompts += 1
                if split == "train":
                    pool_rows[rec["domain"]].append(rec)
            else:
                w.write(f"sft/{split}.jsonl", to_chat(rec))
    finally:
        if prog:
            prog.stop()
    for stage, pool in data.pools.items():
        rows, info = build_pool(pool_rows, pool, seed=data.split.seed, stage=stage)
        for r in rows:
            w.write(f"pools/{stage}.jsonl", to_nemo_gym(r))
        info["path"] = f"pools/{stage}.jsonl" if rows else None
        rep.pools[stage] = info
    w.close()
    rep.blank_lines = counters.get("blank_lines", 0)
    rep.sources = [{"name": s.name, "repo_id": s.repo_id, "config": s.config, "revision": s.revision,
                    "license": s.license, "format": s.fmt, "files": s.files,
                    **{k: per_src[s.name].get(k, 0) for k in ("rows_in", "kept", "quarantined", *DROP_REASONS)}}
                   for s in sources]
    rep.domains = {d: {"train": c["train"], "validation": c["validation"], "kept": c["train"] + c["validation"]}
                   for d, c in sorted(domains.items())}
    rep.outputs = {rel: {"rows": n, "sha256": file_sha256(out / rel)} for rel, n in sorted(w.counts.items())}
    rep.decontamination = {"ngram": data.decontam.ngram, "min_overlap": data.decontam.min_overlap,
                           "fields": data.decontam.fields, "index": index.stats(),
                           "benchmarks": [{**s, "rows_removed": removed.get(s["benchmark"], 0)}
                                          for s in eval_set.sources]}
    held = np.array([int(k, 16) for k in held_keys], np.uint64)
    rep.held_out_prompt_overlap = int(np.isin(held, np.array(train_keys, np.uint64)).sum())
    rep.dedup = dd.model_dump()
    rep.elapsed_s = round(time.time() - t0, 3)
    if rep.held_out_prompt_overlap:
        raise RuntimeError(f"{rep.held_out_prompt_overlap} prompts are in both train and validation (bug: the split "
                           "hashes the prompt key)")
    if not rep.reconciles:
        raise RuntimeError(f"curation counts do not reconcile (bug): rows_in={rep.rows_in} kept={rep.kept} "
                           f"dropped={rep.dropped} quarantined={rep.quarantined}")
    tmp = out / "report.json.tmp"
    tmp.write_text(json.dumps(rep.to_dict(), indent=2, ensure_ascii=False))
    os.replace(tmp, out / "report.json")
    from recipe.data.dataset_cards import write_curated_card
    write_curated_card(rep, out / "README.md", name=out.name)
    return rep
