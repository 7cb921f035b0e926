"""The closing cell of every notebook: what this run showed, in a few sentences read from the run's files, and
which notebook to open next (the run order of README: 05_hub_download -> 00_data -> 10_sft -> 30_cascade_rl_stage
per GRPO stage -> 40_mopd -> 30_cascade_rl_stage ... -> 90_report -> 50_eval).

Evidence is statistical (docs/EVIDENCE.md): a change is called a gain or a loss only when its paired-bootstrap 95%
CI excludes zero; otherwise it is "not shown".
"""
from __future__ import annotations

from recipe.config.schema import STAGE_PLAN, RecipeConfig
from recipe.runs.layout import DATA_PHASE, RunDir

NOTEBOOK_OF = {"data": "00_data.ipynb", "sft": "10_sft.ipynb", "mopd": "40_mopd.ipynb", "report": "90_report.ipynb",
               "eval": "50_eval.ipynb", "hub": "05_hub_download.ipynb"}


def notebook_for(phase: str) -> str:
    return NOTEBOOK_OF.get(phase, "30_cascade_rl_stage.ipynb")


def next_step(phase: str) -> str:
    """Markdown: the notebook to open after ``phase`` and the parameter to set in it."""
    if phase == "hub":
        return ("**Next:** `00_data.ipynb` - set `sources` to the downloaded folders to curate the released data, or "
                "leave it empty for the tiny domains.")
    if phase == "data":
        return "**Next:** `10_sft.ipynb` - SFT on these files, the first stage of the cascade."
    if phase == "report":
        return ("**Next:** `50_eval.ipynb` - evaluate a checkpoint of this run (`stage`, e.g. `\"mopd\"`) on the "
                "benchmarks, or a served model at scale (docs/EVAL_HARNESS.md).")
    if phase == "eval":
        return ("**Next:** `90_report.ipynb` for the whole run's table and heatmap; docs/EVAL_HARNESS.md for the "
                "paper-scale suites and `recipe eval report` (ours next to the paper's Table 1).")
    i = STAGE_PLAN.index(phase) if phase in STAGE_PLAN else len(STAGE_PLAN)
    nxt = STAGE_PLAN[i + 1] if i + 1 < len(STAGE_PLAN) else None
    if nxt is None:
        return "**Next:** `90_report.ipynb` - every stage's scores side by side, the heatmap and the curves."
    where = notebook_for(nxt)
    param = "" if where != "30_cascade_rl_stage.ipynb" else f' with `stage = "{nxt}"`'
    return f"**Next:** `{where}`{param} - the next stage of the plan (`{nxt}`)."


def _shown(deltas: dict) -> tuple[list[str], list[str], list[str]]:
    gains, losses, unclear = [], [], []
    for d, e in deltas.items():
        if d == "input" or e.get("ci_low") is None:
            continue
        label = f"{d} {e['score']:+.1f} [{e['ci_low']:+.1f}, {e['ci_high']:+.1f}]"
        (gains if e["ci_low"] > 0 else losses if e["ci_high"] < 0 else unclear).append(label)
    return gains, losses, unclear


def _validation_line(run: RunDir, stage: str) -> str:
    scores = run.read_validation(stage) or {}
    if not scores:
        return f"`{stage}` has no validation scores yet."
    avg = sum(scores.values()) / len(scores)
    best = max(scores, key=scores.get)
    worst = min(scores, key=scores.get)
    return (f"Validation (report split, avg@k %): average {avg:.1f} over {len(scores)} domains; highest {best} "
            f"{scores[best]:.1f}, lowest {worst} {scores[worst]:.1f}.")


def _curve_line(run: RunDir, stage: str) -> str:
    from recipe.reporting.metrics_reader import stage_scalars
    try:
        df = stage_scalars(run, stage)
    except FileNotFoundError:
        return ""
    for tag, what in (("train/reward", "mean reward"), ("train/reverse_kl", "reverse KL"), ("train/loss", "loss")):
        if tag in df.columns and df[tag].notna().any():
            s = df[tag].dropna()
            k = max(1, min(5, len(s) // 4))
            first, last = s.iloc[:k].mean(), s.iloc[-k:].mean()
            span = f"the first {k} vs the last {k} steps" if k > 1 else "the first vs the last step"
            return (f"Training: {what} {first:.3g} -> {last:.3g} ({span}, {len(s)} steps logged)." if len(s) > 1
                    else f"Training: {what} {last:.3g} at the one step logged.")
    return ""


def stage_summary(run: RunDir, cfg: RecipeConfig, stage: str) -> str:
    """Markdown: a stage's curve trend, validation, and its change over its input checkpoint (CIs)."""
    from recipe.reporting.run_report import stage_deltas
    if not run.is_done(stage):
        return f"### What this run showed\n\n`{stage}` has not finished in run `{run.run_id}`.\n\n{next_step(stage)}"
    lines = [x for x in (_curve_line(run, stage), _validation_line(run, stage)) if x]
    dl = stage_deltas(run, stage)
    if dl:
        gains, losses, unclear = _shown(dl)
        lines.append(f"Against its input `{dl['input']}` (paired bootstrap 95% CI, points): "
                     + "; ".join(x for x in (f"gains shown: {', '.join(gains)}" if gains else "",
                                             f"losses shown: {', '.join(losses)}" if losses else "",
                                             f"not shown (CI spans 0): {len(unclear)} domain(s)" if unclear else "")
                                 if x) + ".")
    return "### What this run showed\n\n" + "\n\n".join(f"- {x}" for x in lines) + f"\n\n{next_step(stage)}"


def data_summary(run: RunDir, cfg: RecipeConfig) -> str:
    m = run.read_manifest(DATA_PHASE) or {}
    counts = m.get("counts", {})
    if not counts:
        return f"### What this run showed\n\nThe data phase has not run in `{run.run_id}`.\n\n{next_step('data')}"
    split_total = {sp: sum(v for k, v in counts.items() if k.endswith("_" + sp)) for sp in ("train", "select", "val")}
    text = (f"- {len(cfg.domains.names)} domains; {split_total['train']:,} training, {split_total['select']:,} "
            f"selection and {split_total['val']:,} validation prompts, the splits disjoint.")
    report = run.stage_dir(DATA_PHASE) / "curated" / "report.json"
    if report.exists():
        from recipe.data.curation_report_views import report_table
        total = report_table(report).loc["total"]
        dropped = {c: int(total[c]) for c in ("contaminated", "exact_duplicate", "near_duplicate", "quarantined")
                   if c in total and total[c]}
        text += (f"\n- Curation kept {int(total['kept']):,} of {int(total['rows_in']):,} training rows"
                 + (f" ({', '.join(f'{k} {v:,}' for k, v in dropped.items())})." if dropped else "."))
    return f"### What this run showed\n\n{text}\n\n{next_step('data')}"


def report_summary(run: RunDir) -> str:
    from recipe.reporting.run_report import report_rows, teacher_marks
    rows = [r for r in report_rows(run) if r["average"] is not None]
    if not rows:
        return f"### What this run showed\n\nNo stage of `{run.run_id}` has scores yet.\n\n{next_step('report')}"
    best = max(rows, key=lambda r: r["average"])
    lines = [f"{len(rows)} checkpoints scored; the highest average is `{best['stage']}` ({best['average']:.1f}), "
             f"the last `{rows[-1]['stage']}` ({rows[-1]['average']:.1f})."]
    marks = teacher_marks(run)
    mopd = next((r for r in rows if r["stage"] == "mopd"), None)
    if mopd and marks:
        by_stage = {r["stage"]: r for r in rows}
        reached = [d for d, s in marks.items() if s in by_stage and mopd.get(d) is not None
                   and by_stage[s].get(d) is not None and mopd[d] >= by_stage[s][d]]
        lines.append(f"MOPD reached its teacher's score on {len(reached)} of {len(marks)} routed domains"
                     + (f" ({', '.join(reached)})." if reached else "."))
    lines.append("Which changes are beyond the noise: the deltas table above (a CI that spans 0 is not shown).")
    return "### What this run showed\n\n" + "\n".join(f"- {x}" for x in lines) + f"\n\n{next_step('report')}"
