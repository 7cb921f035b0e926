"""Per-sample validation results on disk: one JSONL per (stage, checkpoint, split), one line per response with
``domain``, ``item_id``, ``sample``, ``response``, ``reward``::

    <stage dir>/samples/<checkpoint>_<split>.jsonl     checkpoint = final | step_000025 (an intermediate candidate)
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.runs.layout import RunDir, write_text_atomic


def samples_path(run: RunDir, stage: str, checkpoint: str = "final", split: str = "val") -> Path:
    return run.stage_dir(stage) / "samples" / f"{checkpoint}_{split}.jsonl"


def write_samples(path: Path, rows: list[dict]) -> None:
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def read_samples(path: Path) -> list[dict]:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no per-sample validation results (run the stage first)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
