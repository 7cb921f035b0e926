"""Options shared by the commands that read benchmark files or a run's config: ``--benchmarks DIR`` and
``-s key=value`` mean the same everywhere."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

BENCHMARKS_HELP = ("Local folder of benchmark files (each suite's mirror_file inside it); the same as "
                   "-s benchmarks.mirror=DIR. Without it (or $RECIPE_BENCHMARK_MIRROR) a suite comes from the Hub "
                   "where benchmarks.allow_hub is true, else it is skipped with the reason.")


def benchmarks_option() -> Optional[str]:
    return typer.Option(None, "--benchmarks", metavar="DIR", help=BENCHMARKS_HELP)


def set_option(what: str = "key=value override, or @SET for a named override set (repeatable).") -> List[str]:
    return typer.Option([], "--set", "-s", metavar="KEY=VALUE", help=what)


def with_benchmarks(overrides: List[str], benchmarks: Optional[str]) -> list[str]:
    """``overrides`` plus ``benchmarks.mirror=<absolute DIR>`` (DIR as typed is relative to the working directory);
    a folder that does not exist is refused here, with the path, rather than every suite being skipped."""
    out = list(overrides or [])
    if benchmarks:
        p = Path(benchmarks).expanduser().resolve()
        if not p.is_dir():
            raise ValueError(f"--benchmarks {benchmarks}: no such folder ({p}); give the folder that holds the "
                             "benchmark files (e.g. ifeval/input_data.jsonl)")
        out.append(f"benchmarks.mirror={p}")
    return out
