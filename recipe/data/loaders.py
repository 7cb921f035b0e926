"""Input resolution and line reading through ``datasets`` (local files and local Hub-layout directories).

- A **file** (``.jsonl``) is one source named after the file.
- A **Hub-layout directory** (what ``recipe hub download sft-data|rl-data`` writes: ``<dir>/README.md`` whose
  YAML ``configs`` declare ``data_files``, e.g. ``<dir>/<config>/train.jsonl``) gives one source per config,
  resolved with ``datasets.load_dataset_builder`` (nothing touches the network). When the directory is one
  of the releases in the ``data`` config section (RECIPE.md §7) the source carries its repo id, pinned
  revision and license, and SFT configs set the record domain (``math``, ``science``, ``chat``, ...).
- Any other directory: every ``*.jsonl`` below it, one source per file.

Lines are read with the ``datasets`` ``text`` builder in streaming mode (no Arrow cache) as latin-1, which
maps every byte to one character, and are turned back into the exact bytes of the line, so invalid UTF-8
is detected per row (quarantined) instead of failing the whole file. Not covered: compressed files.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from recipe.config.data_section import DataSection, ReleasedDataset


@dataclass
class Source:
    name: str
    files: list[str]
    fmt: str = "auto"
    domain: str | None = None
    revision: str | None = None
    license: str | None = None
    repo_id: str | None = None
    config: str | None = None


def _released_for(path: Path, data: DataSection) -> ReleasedDataset | None:
    name = path.resolve().name.lower()
    for rel in (data.sft_data, data.rl_data):
        short = rel.repo_id.split("/")[-1].lower()
        if name in (short, rel.repo_id.replace("/", "__").lower(), rel.repo_id.replace("/", "--").lower()):
            return rel
    return None


def _card_meta(readme: Path) -> dict:
    from huggingface_hub import DatasetCard
    try:
        return DatasetCard.load(readme).data.to_dict()
    except Exception as e:  # a broken card must not stop curation; the directory is then read as plain JSONL files
        warnings.warn(f"{readme}: dataset card not readable ({e}); reading the directory as plain *.jsonl files")
        return {}


def hub_configs(local_dir: str | Path) -> dict[str, list[str]]:
    """Config name -> data files (train split) of a local Hub-layout directory, resolved by ``datasets``."""
    import datasets
    d = Path(local_dir)
    meta = _card_meta(d / "README.md")
    out: dict[str, list[str]] = {}
    for c in meta.get("configs") or []:
        name = c.get("config_name")
        if not name:
            continue
        builder = datasets.load_dataset_builder(str(d), name=name)
        files = builder.config.data_files or {}
        split = "train" if "train" in files else next(iter(files), None)
        if split is not None:
            out[name] = [str(f) for f in files[split]]
    return out


def resolve_inputs(inputs: list[str | Path], data: DataSection, fmt: str = "auto") -> list[Source]:
    """Sources for the CLI's ``--input`` list (files and directories); raises ``ValueError`` on missing paths."""
    sources: list[Source] = []
    for inp in inputs:
        p = Path(inp)
        configs = hub_configs(p) if p.is_dir() and (p / "README.md").is_file() else {}
        if p.is_file():
            sources.append(Source(name=p.stem, files=[str(p)], fmt=fmt))
        elif configs:
            rel = _released_for(p, data)
            meta = _card_meta(p / "README.md")
            lic = meta.get("license")
            lic = lic[0] if isinstance(lic, list) and lic else lic
            for cfg, files in configs.items():
                repo = rel.repo_id if rel else p.name
                f = fmt if fmt != "auto" or rel is None else rel.format
                domain = cfg if rel is not None and rel.format == "messages" else None
                sources.append(Source(name=f"{repo}/{cfg}", files=files, fmt=f, domain=domain,
                                      revision=rel.revision if rel else None,
                                      license=(rel.license if rel else None) or lic,
                                      repo_id=repo, config=cfg))
        elif p.is_dir():
            files = sorted(str(f) for f in p.rglob("*.jsonl"))
            if not files:
                raise ValueError(f"input directory {p} holds no *.jsonl files and no Hub-layout README.md configs")
            for f in files:
                rel_name = re.sub(r"\.jsonl$", "", str(Path(f).relative_to(p)))
                sources.append(Source(name=f"{p.name}/{rel_name}", files=[f], fmt=fmt))
        else:
            raise ValueError(f"input {p} does not exist; pass JSONL files or directories (see `recipe data curate --help`)")
    return sources


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw_bytes)`` for every line of ``path`` (1-based), read by ``datasets`` in streaming mode."""
    import datasets
    ds = datasets.load_dataset("text", data_files={"train": [str(path)]}, split="train", streaming=True,
                               encoding="latin-1")
    for i, row in enumerate(ds, start=1):
        yield i, row["text"].encode("latin-1")


def load_released(local_dir: str | Path, config: str, data: DataSection | None = None) -> Iterator[dict]:
    """Normalized records of one released config in a local Hub-layout directory (streamed).

    Rows that cannot be read raise :class:`recipe.data.formats.RowError`; use ``recipe.data.curate`` to
    quarantine them instead.
    """
    from recipe.data.formats import normalize_row
    import json
    data = data or DataSection()
    srcs = [s for s in resolve_inputs([local_dir], data) if s.config == config]
    if not srcs:
        raise ValueError(f"{local_dir} declares no config {config!r}; available: {sorted(hub_configs(local_dir))}")
    s = srcs[0]
    for f in s.files:
        for n, raw in iter_lines(f):
            if raw.strip():
                yield normalize_row(json.loads(raw.decode("utf-8")), s.fmt, source_name=s.name, revision=s.revision,
                                    license=s.license, row_index=n, domain=s.domain)
