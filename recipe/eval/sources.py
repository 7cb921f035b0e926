"""Where a benchmark's rows come from: a Hub dataset at a pinned revision (through ``recipe.hub``), or a local
mirror of the same files (a folder laid out as ``mirror_file`` says).

``BenchmarkSource`` names the Hub repo, its revision, the file inside it and the file's path inside a mirror.
``fetch`` prefers the mirror when one is configured and holds the file, else downloads the one file at the revision
(``hf_hub_download``, honouring ``HF_ENDPOINT``); when neither works it raises ``SourceUnavailable`` -- callers show
the benchmark as unavailable, they never substitute other rows. ``read_rows`` reads JSONL (split on ``\\n`` only),
a JSON array, CSV or Parquet. The provenance (repo, revision, file, sha256, mirror or hub) goes into ``results.json``.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from recipe.config.benchmarks_section import BenchmarkSource
from recipe.runs.content_hashes import sha256_file


class SourceUnavailable(RuntimeError):
    """Neither the mirror nor the Hub could provide the benchmark file."""


def fetch(source: BenchmarkSource, mirror: Path | None = None, *, allow_hub: bool = True) -> tuple[Path, dict]:
    prov = {"repo_id": source.repo_id, "revision": source.revision, "pinned": source.pinned, "file": source.file}
    if mirror is not None and source.mirror_file:
        p = Path(mirror) / source.mirror_file
        if p.is_file():
            return p, {**prov, "via": "mirror", "path": str(p), "sha256": sha256_file(p)}
    if not allow_hub:
        raise SourceUnavailable(offline_message(source, mirror))
    from huggingface_hub import hf_hub_download

    from recipe.hub.hub_errors import HubError, current_endpoint, hub_errors
    try:
        endpoint = current_endpoint()
        with hub_errors(source.repo_id, source.repo_type, endpoint, source.revision):
            p = Path(hf_hub_download(source.repo_id, source.file, repo_type=source.repo_type, revision=source.revision,
                                     etag_timeout=10, endpoint=endpoint))
    except (HubError, OSError) as e:
        raise SourceUnavailable(f"{source.repo_id}@{source.revision}:{source.file} unavailable: {e}") from None
    return p, {**prov, "via": "hub", "path": str(p), "sha256": sha256_file(p)}


def offline_message(source: BenchmarkSource, mirror: Path | None) -> str:
    """Why a benchmark file is unavailable offline, and the two ways to provide it (one line)."""
    where = (f"the benchmark folder {mirror} has no {source.mirror_file}" if mirror is not None and source.mirror_file
             else "no benchmark folder is set")
    fix = (f"--benchmarks DIR (or -s benchmarks.mirror=DIR, or $RECIPE_BENCHMARK_MIRROR) with DIR/{source.mirror_file}"
           if source.mirror_file else "a mirror_file for it in the config's benchmarks.suites")
    return (f"{source.repo_id}:{source.file} is unavailable: {where} and the Hub is off; provide it with {fix}, or let "
            "it download at the pinned revision with -s benchmarks.allow_hub=true")


def read_rows(path: Path, fmt: str | None = None) -> list[dict]:
    path = Path(path)
    fmt = fmt or {".jsonl": "jsonl", ".txt": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}.get(
        path.suffix, "jsonl")
    if fmt == "jsonl":
        rows = []
        for no, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise ValueError(f"{path}:{no}: not JSON: {e}") from None
        return rows
    if fmt == "json":  # one JSON array of rows (LongBench v2's data.json)
        rows = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a JSON array of rows")
        return rows
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    if fmt == "parquet":
        import pandas as pd
        return pd.read_parquet(path).to_dict(orient="records")
    raise ValueError(f"unknown format {fmt!r} for {path}")


def load_rows(source: BenchmarkSource, mirror: Path | None = None, *, allow_hub: bool = True) -> tuple[list[dict], dict]:
    path, prov = fetch(source, mirror, allow_hub=allow_hub)
    rows = read_rows(path, source.format)
    return rows, {**prov, "rows": len(rows)}
