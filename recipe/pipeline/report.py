"""The final table: per-domain validation scores after every stage, their average, and the chosen teachers."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from recipe.runs.layout import RunDir, read_json


def score_table(run: RunDir) -> tuple[list[str], list[tuple[str, dict[str, float]]]]:
    matrix = read_json(run.scores_path, {"checkpoints": {}, "domains": []}) or {"checkpoints": {}}
    domains = matrix.get("domains", [])
    return domains, list(matrix["checkpoints"].items())


def report_rows(run: RunDir) -> list[dict]:
    domains, rows = score_table(run)
    out = []
    for stage, sc in rows:
        vals = [sc[d] for d in domains if d in sc]
        out.append({"stage": stage, **{d: sc.get(d) for d in domains},
                    "average": round(sum(vals) / len(vals), 2) if vals else None})
    return out


def print_report(run: RunDir, not_run: list[str] | None = None, console: Console | None = None) -> None:
    console = console or Console()
    domains, rows = score_table(run)
    teachers = read_json(run.teachers_path, {}) or {}
    table = Table(title=f"Run {run.run_id}: validation score per domain after each stage (%)")
    table.add_column("stage")
    for d in domains:
        table.add_column(d, justify="right")
    table.add_column("average", justify="right", style="bold")
    for r in report_rows(run):
        cells = []
        for d in domains:
            v = r.get(d)
            mark = "*" if teachers.get(d, {}).get("stage") == r["stage"] else ""
            cells.append("-" if v is None else f"{v:.1f}{mark}")
        table.add_row(r["stage"], *cells, "-" if r["average"] is None else f"{r['average']:.1f}")
    console.print(table)
    if teachers:
        console.print("* = best checkpoint so far for that domain (teachers.json): " +
                      ", ".join(f"{d} <- {t['stage']} ({t['score']:.1f})" for d, t in teachers.items()))
    if not_run:
        console.print(f"not run in this invocation: {', '.join(not_run)}")
