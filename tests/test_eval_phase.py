"""The eval phase at the end of `recipe run`: the final checkpoint on every tiny domain and on a real AIME/IFEval
slice read from the mirror; with no mirror and no Hub the slice is reported unavailable (nothing substituted); a
second run reuses every cached sample; the results reach the model card's model-index."""
from __future__ import annotations

import json

import pytest

from _tiny_fast import FAST

pytestmark = pytest.mark.slow


def test_eval_phase_scores_tiny_suites_and_real_slice(tmp_path, monkeypatch, shared_dir):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    from recipe.hub.model_index import eval_results_for_card
    from recipe.eval.run_phase import run_eval_phase
    from recipe.pipeline.cascade_runner import run_pipeline
    # code answers need more tokens than the phase's cap: the tiny suite gets the domain's validation cap
    run = run_pipeline(profile="tiny", run_id="ev", overrides=[*FAST, "evaluation.max_new_tokens_per_domain={code: 48}"],
                       until="sft", via_notebooks=False)
    from recipe.runs.run_init import open_run
    _, cfg = open_run("ev")
    summary = json.loads((run.path / "eval" / "sft" / "summary.json").read_text())
    suites = summary["suites"]
    assert {f"tiny_{d}" for d in cfg.domains.names} <= set(suites)
    from recipe.domains.data_phase import load_splits
    val = {d: min(64, len(v["val"])) for d, v in load_splits(run, cfg).items()}  # tiny_limit 64
    assert {d: suites[f"tiny_{d}"]["n"] for d in cfg.domains.names} == {d: val[d] for d in cfg.domains.names}
    assert suites["aime25"]["n"] == 4 and suites["ifeval"]["n"] == 8
    r = json.loads((run.path / "eval" / "sft" / "aime25" / "results.json").read_text())
    assert r["settings"]["source"]["via"] == "mirror" and r["settings"]["source"]["limit"] == 4
    assert r["settings"]["sampling"]["max_tokens"] == cfg.benchmarks.eval_phase.max_tokens
    caps = {d: json.loads((run.path / "eval" / "sft" / f"tiny_{d}" / "results.json").read_text())["settings"]
            ["sampling"]["max_tokens"] for d in ("code", "math")}
    assert caps == {"code": 48, "math": cfg.evaluation.max_new_tokens}  # each tiny suite: its validation cap
    assert "eval" in json.loads((run.path / "timings.json").read_text())["phases"]
    # a second evaluation generates nothing new
    run_eval_phase(run, cfg, "sft")
    r2 = json.loads((run.path / "eval" / "sft" / "aime25" / "results.json").read_text())
    assert r2["generation"]["generated"] == 0 and r2["generation"]["reused_from_cache"] == 4
    assert r2["score"] == r["score"]
    names = {e.dataset_name for e in eval_results_for_card(run, "sft")}
    assert {"aime25", "ifeval", "tiny_math"} <= names
    # no mirror, no Hub: unavailable, never faked
    offline = cfg.model_copy(update={"benchmarks": cfg.benchmarks.model_copy(update={"mirror": str(tmp_path / "none")})})
    s = run_eval_phase(run, offline, "sft")
    assert "unavailable" in s["suites"]["aime25"] and "unavailable" in s["suites"]["ifeval"]
    assert "n" in s["suites"]["tiny_math"]
