"""What the recipe did to a real model: a run's final checkpoint against the model it started from (the small
profile: the imported SmolLM2-135M-Instruct), on the same rows of the same suites through the eval harness
(``recipe.eval.api.evaluate``), each score with its 95% CI and n, and the paired-bootstrap delta per suite
(items both checkpoints scored). A delta whose interval contains 0 is "not shown", never a gain.

On CPU this is run on the smoke's short run (2 steps a stage): it shows the comparison works, not what the full
profile does to the model; on a GPU it is the full small profile's final checkpoint.
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.stats.intervals import paired_bootstrap_delta


def _item_scores(path: Path) -> dict[str, float]:
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            d = json.loads(line)
            if d.get("mean_score") is not None:
                out[str(d["id"])] = float(d["mean_score"])
    return out


def last_finished_stage(run, cfg) -> str:
    """The last stage done (``RunDir.done_stages``) up to ``run.until``: a run stopped early, or one still running, is
    compared at the checkpoint it has."""
    from recipe.config import STAGE_PLAN
    plan = STAGE_PLAN[: STAGE_PLAN.index(cfg.run.until) + 1] if cfg.run.until in STAGE_PLAN else STAGE_PLAN
    done = [s for s in run.done_stages() if s in plan]
    if not done:
        raise ValueError(f"run {run.run_id} has no finished stage (no manifest with status done under {run.path})")
    return done[-1]


def compare_to_start(run, cfg, *, start: str | Path | None = None, stage: str | None = None,
                     tiny_limit: int | None = None, real_suites: dict[str, int] | None = None,
                     out: str | Path | None = None, start_instruct: bool = False) -> dict:
    """Evaluate ``start`` (default ``cfg.model.name``) and ``stage``'s checkpoint (default the run's last finished
    stage) on the tiny suites of the run's domains and on ``real_suites`` (default
    ``benchmarks.eval_phase.real_suites``), with the eval phase's sampling settings; returns ``{"start", "stage",
    "rows", ...}`` (also ``out/comparison.json``; ``comparison_start_instruct.json`` with ``start_instruct``), one
    row per suite: before / after score with CI and n, and the paired delta with its CI (``shown``: the interval
    excludes 0). Results are written under ``out``; ``complete`` is false in a comparison.json written before the
    last suite. ``start_instruct`` scores ``start`` in instruct mode (its
    own mode when it was never trained to think: in thinking mode an answer that never closes ``</think>`` is no
    answer) and the checkpoint in the eval phase's mode."""
    from recipe.eval.api import evaluate
    from recipe.eval.backends.hf import HFBackend
    from recipe.pipeline.start_model import start_model_folder
    from recipe.rewards.nltk_data import NltkDataMissing
    ep = cfg.benchmarks.eval_phase
    stage = stage or last_finished_stage(run, cfg)
    if not run.is_done(stage):
        raise ValueError(f"stage {stage} is not done in run {run.run_id} (done: {', '.join(run.done_stages()) or 'none'}"
                         "); give --stage with one of those, or run the stage first")
    out = Path(out or run.path / "eval" / "before_after")
    out.mkdir(parents=True, exist_ok=True)
    start = start_model_folder(run, cfg, out, start)
    knobs = dict(k=ep.k, temperature=ep.temperature, top_p=ep.top_p, seed=cfg.run.seed, cfg=cfg, run_id=run.run_id,
                 stage=stage)
    tiny = ep.tiny_suites or [f"tiny_{d}" for d in cfg.domains.names]
    real = ep.real_suites if real_suites is None else real_suites
    backends = {"before": HFBackend(start, batch_size=ep.batch_size, device=cfg.run.device),
                "after": HFBackend(run.checkpoint_dir(stage), batch_size=ep.batch_size, device=cfg.run.device)}
    if cfg.model.thinking == "plain_tokens":
        from recipe.model.plain_thinking import adopt_plain_thinking
        adopt_plain_thinking(backends["before"].tokenizer)  # the run's thinking convention, as its checkpoints carry
    # suite by suite, the real suites first, both models on each before the next suite: comparison.json is
    # rewritten after every suite, so a run cut short keeps the pairs it finished ("complete": false)
    jobs = [(name, dict(limit=n, max_tokens=ep.max_tokens)) for name, n in real.items()]
    jobs += [(name, dict(limit=tiny_limit or ep.tiny_limit)) for name in tiny]
    thinking = {"before": ep.thinking and not start_instruct, "after": ep.thinking}
    mode = {label: "thinking" if on else "instruct" for label, on in thinking.items()}
    suffix = "_start_instruct" if start_instruct else ""      # the start model's samples and table, per mode
    dirs = {"before": out / f"before{suffix}", "after": out / "after"}
    comparison = {"start": str(start), "stage": stage, "start_mode": mode["before"], "stage_mode": mode["after"],
                  "complete": False, "rows": []}
    for i, (name, kw) in enumerate(jobs):
        try:
            res = {label: evaluate([name], out=dirs[label], backend=backends[label], thinking=thinking[label], **kw,
                                   **knobs).get(name, {})
                   for label in ("before", "after")}
        except NltkDataMissing as e:  # the IF checkers' data: the suite is skipped with the fix, its samples kept
            res = {"before": {"unavailable": str(e)}, "after": {}}
        comparison["rows"].append(_row(name, res["before"], res["after"], dirs["before"], dirs["after"]))
        comparison["complete"] = i == len(jobs) - 1
        (out / f"comparison{suffix}.json").write_text(json.dumps(comparison, indent=2) + "\n")
    return comparison


def _row(name: str, b: dict, a: dict, before_dir: Path, after_dir: Path) -> dict:
    """One suite's row: before / after score with CI and n, the paired-bootstrap delta over shared items."""
    row: dict = {"suite": name}
    if "unavailable" in a or "unavailable" in b:
        row["unavailable"] = a.get("unavailable") or b.get("unavailable")
        return row
    for label, r in (("before", b), ("after", a)):
        row[label] = {"score": r.get("score"), "ci95": r.get("ci95"), "n": r.get("n")}
    d = paired_bootstrap_delta(_item_scores(after_dir / name / "items.jsonl"),
                               _item_scores(before_dir / name / "items.jsonl"), scale=100.0)
    row["delta"] = {"score": round(d.score, 2), "ci95": [round(d.ci_low, 2), round(d.ci_high, 2)], "n": d.n}
    row["shown"] = d.ci_low > 0 or d.ci_high < 0
    return row


def _cell(r: dict) -> str:
    if r.get("score") is None:
        return "-"
    lo, hi = r["ci95"]
    return f"{r['score']:.1f} [{lo:.1f}, {hi:.1f}] n={r['n']}"


def print_comparison(comparison: dict, console=None) -> None:
    """The before/after table: one row a suite; a delta whose 95% interval contains 0 reads "not shown"."""
    from rich.console import Console
    from rich.table import Table

    from recipe.console_tables import print_table
    cut = "" if comparison.get("complete", True) else f" (cut short after {len(comparison['rows'])} suites)"
    modes = f"{comparison.get('start_mode', 'thinking')} / {comparison.get('stage_mode', 'thinking')} mode"
    t = Table(title=f"{comparison['start']} (before) vs {comparison['stage']} (after), {modes}: 95% CIs; "
                    f"paired-bootstrap delta over shared items{cut}")
    for col in ("suite", "before", "after", "delta", "verdict"):
        t.add_column(col)
    for row in comparison["rows"]:
        if "unavailable" in row:
            t.add_row(row["suite"], "-", "-", "-", "skipped (below)")
            continue
        d = row["delta"]
        verdict = ("gain" if d["score"] > 0 else "loss") if row["shown"] else "not shown"
        t.add_row(row["suite"], _cell(row["before"]), _cell(row["after"]),
                  f"{d['score']:+.1f} [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}] n={d['n']}", verdict)
    print_table(t, console)
    for line in skipped_lines(comparison):  # whole lines: the reason names how to provide the suite
        (console or Console()).print(line, markup=False, highlight=False, soft_wrap=True)


def skipped_lines(comparison: dict) -> list[str]:
    """One line per suite that could not be compared: which, and why (the reason names how to provide it)."""
    return [f"skipped {row['suite']}: {row['unavailable']}" for row in comparison["rows"] if "unavailable" in row]
