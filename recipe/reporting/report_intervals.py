"""``recipe report --ci``: every validation score of a run with its 95% interval and n (``validation.json``'s
``ci``), one row per checkpoint, as ``report_data`` holds them; the plain report shows the scores alone."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from recipe.console_tables import print_table


def _cell(e: dict | None) -> str:
    if not e or e.get("score") is None:
        return "-"
    if e.get("ci_low") is None:
        return f"{e['score']:.1f} (no CI recorded)"
    return f"{e['score']:.1f} [{e['ci_low']:.1f}, {e['ci_high']:.1f}] n={e['n']}"


def print_score_intervals(data: dict, run_id: str, console: Console | None = None) -> None:
    """``data``: ``report_data(run)``. One row per finished stage, a cell per domain: score [95% CI] n."""
    stages = data["stages"]
    domains = sorted({d for per in stages.values() for d in per})
    table = Table(title=f"Run {run_id}: validation score per domain, 95% CI over prompts and n (%)")
    table.add_column("stage")
    for d in domains:
        table.add_column(d, justify="right")
    for stage, per in stages.items():
        table.add_row(stage, *(_cell(per.get(d)) for d in domains))
    print_table(table, console or Console())
