"""Benchmark items for decontamination, read the way the evaluation reads them.

A suite's item is the text of the user turns of ``suite.messages(row)``, after the suite's own ``adapt_rows``:
what the model is shown at evaluation time, in the benchmark's own field names (LiveCodeBench's
``question_content``, SWE-bench's ``problem_statement``, ...), so every registered suite is covered by construction.
The template around the item (e.g. the math prompt's boxed-answer sentence) is shared by every item and is left
out of the index (``recipe.data.decontam.NgramIndex.build(drop_shared=True)``). Benchmarks evaluated outside the
suite registry are read by their columns (``TABLE_BENCHMARKS``: IMO-AnswerBench and IMO-ProofBench as
``recipe.eval.olympiad`` reads them, GPQA-Diamond's CSV). A source that yields no item is an error naming it.

Public entry points: :func:`eval_set` (what ``recipe data curate`` decontaminates against) and
:func:`contaminated_prompts` (check generated prompts against named benchmarks).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import recipe.eval.benchmarks  # noqa: F401  (registers every built-in suite)
from recipe.data.eval_set import (EvalSet, eval_items_from_file, file_sha256, no_items_message, read_eval_rows)
from recipe.data.record import content_text
from recipe.eval.benchmarks.suite_registry import RowError, get_suite, suite_names
from recipe.eval.olympiad.imo.imo_answer import COLUMNS as IMO_COLUMNS
from recipe.eval.sources import SourceUnavailable, fetch, read_rows
from recipe.runs.layout import benchmark_mirror

# Benchmarks scored outside the suite registry: name -> (id column, item text columns).
TABLE_BENCHMARKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "imo_answerbench": (IMO_COLUMNS[0], (IMO_COLUMNS[1],)),  # "Problem ID", "Problem" (recipe.eval.olympiad)
    "imo_proofbench": (IMO_COLUMNS[0], (IMO_COLUMNS[1],)),
    "gpqa_diamond": ("Record ID", ("Question",)),  # Idavidrein/gpqa gpqa_diamond.csv
}


def benchmark_names() -> list[str]:
    """Every benchmark a decontamination set can name."""
    return sorted(set(suite_names()) | set(TABLE_BENCHMARKS))


def rows_items(name: str, rows: list, where: str, label: str | None = None) -> list[tuple[str, str]]:
    """``(item_id, text)`` of benchmark ``name``'s ``rows`` (read from ``where``; ids ``<label>:<row id>``, label
    default ``name``); ``ValueError`` naming ``where`` when no row yields an item."""
    label = label or name
    items: list[tuple[str, str]] = []
    bad: list[str] = []
    if name in TABLE_BENCHMARKS:
        id_col, cols = TABLE_BENCHMARKS[name]
        for i, r in enumerate(rows):
            text = "\n".join(str(r.get(c) or "") for c in cols).strip() if isinstance(r, dict) else ""
            if text:
                items.append((f"{label}:{r.get(id_col) or i}", text))
            else:
                bad.append(f"row {i + 1}: no {', '.join(cols)}")
    else:
        suite = get_suite(name)
        rows = suite.adapt_rows(rows) if suite.adapt_rows else rows
        for i, r in enumerate(rows):
            try:
                rid = suite.check_row(r)
                msgs = suite.messages(r, False)
            except (RowError, KeyError, TypeError, ValueError) as e:
                bad.append(f"row {i + 1}: {e}")
                continue
            text = "\n".join(content_text(m.get("content")) for m in msgs if m.get("role") == "user").strip()
            if text:
                items.append((f"{label}:{rid}", text))
    if not items:
        detail = f" as {name}" + (f" ({len(bad)} rows rejected; first: {bad[0]})" if bad else "")
        raise ValueError(no_items_message(where, detail))
    return items


def _detect(row: object) -> str | None:
    """The benchmark whose fields a row carries (suites first), else None."""
    if not isinstance(row, dict):
        return None
    for name in suite_names():
        s = get_suite(name)
        if not name.startswith("tiny_") and all(f in row for f in (s.id_field, *s.required_fields)):
            return name
    for name, (id_col, cols) in sorted(TABLE_BENCHMARKS.items()):
        if all(c in row for c in (id_col, *cols)):
            return name
    return None


def file_items(spec: str | Path) -> tuple[str, list[tuple[str, str]], dict]:
    """An evaluation file: ``BENCHMARK=PATH`` (read by that benchmark's definition) or ``PATH`` (the benchmark is
    recognised by its fields; a file of no known benchmark is read by the generic fields). Returns the benchmark
    label, its items and the file's provenance."""
    spec = str(spec)
    name, _, path = spec.partition("=") if "=" in spec and spec.split("=", 1)[0] in benchmark_names() else ("", "", spec)
    p = Path(path)
    prov = {"path": str(p), "sha256": None}
    rows = read_eval_rows(p)
    prov["sha256"] = file_sha256(p)
    reader = name or _detect(rows[0] if rows else None)
    if reader is None:
        return p.name, eval_items_from_file(p), {**prov, "reader": "generic"}
    return name or p.name, rows_items(reader, rows, str(p), name or p.name), {**prov, "reader": reader}


def _source(name: str, cfg):
    own = cfg.data.decontam.sources.get(name)
    if own is not None:
        return own
    from recipe.eval.api import benchmark_source
    return benchmark_source(name, cfg)


def benchmark_items(name: str, cfg) -> tuple[list[tuple[str, str]], dict]:
    """Items of one named benchmark from its configured source (``benchmarks.mirror`` first, then the Hub)."""
    if name not in benchmark_names():
        raise ValueError(f"data.decontam.benchmarks: unknown benchmark {name!r}; known: {', '.join(benchmark_names())}")
    try:
        src = _source(name, cfg)
        hub = cfg.benchmarks.allow_hub and src.repo_type in ("dataset", "model", "space")
        path, prov = fetch(src, benchmark_mirror(cfg), allow_hub=hub)
    except SourceUnavailable as e:
        raise ValueError(f"decontamination benchmark {name}: {e}. Put the file in the benchmark mirror "
                         f"(benchmarks.mirror or $RECIPE_BENCHMARK_MIRROR), or list in data.decontam.benchmarks only the "
                         f"benchmarks to decontaminate against (then none against {name})") from None
    rows = read_rows(path, src.format)
    return rows_items(name, rows, str(path)), {k: prov.get(k) for k in ("repo_id", "revision", "file", "via", "path",
                                                                        "sha256")}


def configured_benchmarks(cfg) -> list[str]:
    """The benchmarks ``data.decontam.benchmarks`` names; ``all`` = every suite of the ``benchmarks`` section with a
    source (a Table 1 row with only the paper's value has no items to read) and every entry of
    ``data.decontam.sources``."""
    want = cfg.data.decontam.benchmarks
    if want == "all":
        with_rows = {n for n, e in cfg.benchmarks.suites.items() if e.source is not None}
        return sorted(with_rows | set(cfg.data.decontam.sources))
    return list(want)


def eval_set(cfg, extra_files: Iterable[str | Path] = ()) -> EvalSet:
    """Everything a curation under ``cfg`` decontaminates against: the configured benchmarks, the configured
    ``eval_files`` and ``extra_files`` (``BENCHMARK=PATH`` or ``PATH``)."""
    out = EvalSet()
    for name in configured_benchmarks(cfg):
        items, prov = benchmark_items(name, cfg)
        out.add(name, items, {**prov, "reader": name})
    for spec in [*cfg.data.decontam.eval_files, *extra_files]:
        label, items, prov = file_items(spec)
        out.add(label, items, prov)
    return out


def contaminated_prompts(prompts: list[str], benchmarks: list[str], *, n: int = 13, cfg=None) -> list[str | None]:
    """For each of ``prompts``, the id (``"<benchmark>:<item id>"``) of a benchmark item it shares an ``n``-word
    n-gram with, else ``None``; keep the prompts whose entry is ``None``.

    ``benchmarks``: suite names (``ifeval``, ``ifbench``, ...) or ``TABLE_BENCHMARKS`` names, read from their
    configured sources (``cfg``: a ``RecipeConfig``; default the paper profile, which configures every benchmark).
    Words and matching are those of the curation's decontamination (``recipe.data.decontam``)."""
    if cfg is None:
        from recipe.config import load_config
        cfg = load_config("paper")
    items = EvalSet()
    for name in benchmarks:
        got, prov = benchmark_items(name, cfg)
        items.add(name, got, prov)
    return items.index(n).check_batch(list(prompts))
