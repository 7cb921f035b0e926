"""The eval phase at the end of ``recipe run`` (tiny profile, ``benchmarks.eval_phase``): the final checkpoint on the
tiny suites (the run's validation rows) and on a small slice of real benchmarks (AIME 2025, IFEval: the first N
rows, from the mirror or the Hub), k samples each with the phase's settings. A benchmark whose rows cannot be had is
shown as unavailable, never faked; the tiny model scores ~0 on the real slice and the table says so. Results go to
``<run>/eval/<stage>/<suite>/`` with ``summary.json`` beside them; a second ``make run`` reuses the cached samples."""
from __future__ import annotations

import json
import time

from rich.console import Console

from recipe.console_tables import print_table
from recipe.eval.api import evaluate
from recipe.eval.report.results_tables import format_results_table

console = Console()


def run_eval_phase_of(run_id: str, stage: str, width: int = 120) -> dict:
    """The eval phase of an existing run, printing plain text (``recipe run`` calls this in its notebook kernel,
    where torch is already loaded, and shows what it printed)."""
    import sys

    from recipe.runs.run_init import open_run
    run, cfg = open_run(run_id)
    plain = Console(file=sys.stdout, force_jupyter=False, force_terminal=False, width=width)
    return run_eval_phase(run, cfg, stage, console=plain)


def run_eval_phase(run, cfg, stage: str, console: Console = console) -> dict:
    ep = cfg.benchmarks.eval_phase
    if not ep.enabled:
        return {}
    from recipe.eval.backends.hf import HFBackend
    t0 = time.time()
    backend = HFBackend(run.checkpoint_dir(stage), batch_size=ep.batch_size, device=cfg.run.device)
    out = run.path / "eval" / stage
    knobs = dict(k=ep.k, temperature=ep.temperature, top_p=ep.top_p, thinking=ep.thinking, seed=cfg.run.seed)
    tiny = ep.tiny_suites or [f"tiny_{d}" for d in cfg.domains.names]
    # no max_tokens for the tiny suites: each gets its domain's validation cap (recipe.eval.api.evaluate)
    results = evaluate(tiny, out=out, run_id=run.run_id, stage=stage, backend=backend, cfg=cfg, limit=ep.tiny_limit,
                       **knobs)
    for name, n in ep.real_suites.items():
        results.update(evaluate([name], out=out, run_id=run.run_id, stage=stage, backend=backend, limit=n, cfg=cfg,
                                max_tokens=ep.max_tokens, **knobs))
    summary = {"stage": stage, "checkpoint": str(run.checkpoint_dir(stage)), "wall_s": round(time.time() - t0, 2),
               "real_slice_note": "first N rows of each real benchmark: a smoke test of the harness, not a score",
               "suites": {n: ({"unavailable": r["unavailable"]} if "unavailable" in r else
                              {k: r.get(k) for k in ("score", "stderr", "ci95", "n", "k", "no_answer_rate",
                                                     "truncation_rate", "complete")}) for n, r in results.items()}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print_table(format_results_table(results), console)
    console.print(f"real-benchmark rows are a slice ({', '.join(f'{k}: {v}' for k, v in ep.real_suites.items())} rows):"
                  " the tiny model scores ~0 there; unavailable = no mirror and no Hub access, nothing substituted")
    return summary
