"""What each finished stage of a run cost, read from its manifest: device and precision, wall seconds (the whole
stage: load, training loop, save, validation) and the training loop's seconds, tokens, tokens per second and peak
memory (``runtime``, written by ``recipe.train.device.StageMeter``). ``recipe report --costs`` prints it; a run
stopped early (``--until``, a kill, a time limit) shows the stages it finished."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from recipe.console_tables import print_table
from recipe.runs.layout import RunDir


def stage_cost_rows(run: RunDir) -> list[dict]:
    rows = []
    for stage in run.done_stages():
        m = run.read_manifest(stage)
        rt, tm = m.get("runtime") or {}, m.get("timings") or {}
        steps = len({r.get("step") for r in run.read_metrics(stage) if r.get("step") is not None})
        rows.append({"stage": stage, "device": rt.get("device_name") or rt.get("device"), "dtype": rt.get("dtype"),
                     "steps": steps, "stage_s": tm.get("total_s"), "train_s": tm.get("train_s"),
                     "s_per_step": round(tm["train_s"] / steps, 3) if steps and tm.get("train_s") else None,
                     "tokens": rt.get("tokens"), "tokens_per_s": rt.get("tokens_per_s"),
                     "peak_memory_mb": rt.get("peak_memory_mb"), "peak_memory_kind": rt.get("peak_memory_kind")})
    return rows


def print_stage_costs(run: RunDir, console: Console | None = None) -> None:
    console = console or Console()
    rows = stage_cost_rows(run)
    table = Table(title=f"Run {run.run_id}: what each finished stage cost (manifest runtime and timings)")
    for col in ("stage", "device", "dtype", "steps", "stage s", "loop s", "s/step", "tokens", "tok/s", "peak MB"):
        table.add_column(col, justify="left" if col in ("stage", "device", "dtype") else "right")

    def fmt(v, spec: str) -> str:
        return "-" if v is None else format(v, spec)
    for r in rows:
        table.add_row(r["stage"], str(r["device"] or "-"), str(r["dtype"] or "-"), str(r["steps"]),
                      fmt(r["stage_s"], ".1f"), fmt(r["train_s"], ".1f"), fmt(r["s_per_step"], ".2f"),
                      fmt(r["tokens"], ","), fmt(r["tokens_per_s"], ",.0f"), fmt(r["peak_memory_mb"], ",.0f"))
    print_table(table, console)
    if rows:
        total = sum(r["stage_s"] or 0 for r in rows)
        console.print(f"{len(rows)} stage(s) finished, {total:.0f} s in all; peak memory: "
                      f"{rows[0]['peak_memory_kind']}")
