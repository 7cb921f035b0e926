"""Evidence targets pooled over runs, on hand-built per-sample files (no training)."""
from __future__ import annotations

import pytest

from recipe.reporting.evidence import DeltaTarget, TeacherMatchTarget, evidence_rows
from recipe.runs import RunDir
from recipe.runs.layout import write_json_atomic
from recipe.validation.samples import samples_path, write_samples


def _run(tmp_path, name, before, after, teacher):
    """Stages sft -> if_rl; 'if' rewards per prompt: before[i], after[i]; mopd (from if_rl) teacher sft on 'if'."""
    run = RunDir(tmp_path / name)
    for stage, prev in (("sft", None), ("if_rl", "sft"), ("mopd", "if_rl")):
        inputs = {"init_checkpoint": {"path": str(run.checkpoint_dir(prev))}} if prev else {}
        run.write_manifest(stage, {"status": "done", "inputs": inputs})
    for stage, vals in (("sft", teacher), ("if_rl", before), ("mopd", after)):
        write_samples(samples_path(run, stage), [{"domain": "if", "item_id": f"p{i}", "sample": s, "response": "",
                                                  "reward": v} for i, v in enumerate(vals) for s in (0, 1)])
    write_json_atomic(run.teachers_path, {"mopd": {"teachers": {"if": {"stage": "sft", "candidate": "sft@final"}}}})
    return run


def test_delta_target_pools_paired_differences_over_runs(tmp_path):
    # run A: every prompt +1 (0 -> 1 on 2 of 4 prompts = +50 points); run B: +0 -> pooled 8 prompts, mean +25
    a = _run(tmp_path, "a", [0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0])
    b = _run(tmp_path, "b", [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0])
    (row,) = DeltaTarget("x", "mopd raises if", "mopd", ("if",)).evaluate([a, b])
    assert row["score"] == pytest.approx(25.0) and row["n"] == 8 and row["seeds"] == 2
    # no paired difference is negative, so no resample mean is; but (6/8)^8 = 10% of resamples draw neither improved
    # prompt, so the 2.5th percentile is exactly 0 and the claim does not hold with 8 prompts
    assert row["ci_low"] == 0.0 and 25.0 < row["ci_high"] <= 100.0 and row["holds"] is False
    # a flat stage never holds: its interval is [0, 0]
    (flat,) = DeltaTarget("y", "flat", "mopd", ("if",)).evaluate([b])
    assert (flat["score"], flat["holds"]) == (0.0, False)


def test_stage_domain_deltas_give_the_paired_change_and_the_input_interval(tmp_path):
    """What a stage costs the rest, per domain pooled over runs: the paired change, and the stage's score beside its
    input's interval (mopd from if_rl here; run A gains 50 points on 'if', run B none)."""
    from recipe.reporting.evidence import stage_domain_deltas
    a = _run(tmp_path, "a", [0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0])
    b = _run(tmp_path, "b", [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0])
    (row,) = stage_domain_deltas([a, b], "mopd", ["if"])
    assert row["domain"] == "if" and row["score"] == pytest.approx(25.0) and row["n"] == 8
    assert row["input"]["score"] == pytest.approx(50.0) and row["after"]["score"] == pytest.approx(75.0)
    assert row["input"]["ci_low"] < 50.0 < row["input"]["ci_high"]


def test_teacher_match_and_missing_stages(tmp_path):
    # student 75 on 4 prompts; teacher sft 100 everywhere: CI [100, 100] -> the student is below it
    a = _run(tmp_path, "a", [0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1])
    (row,) = TeacherMatchTarget("e", "within").evaluate([a])
    assert row["score"] == 75.0 and row["teacher"]["score"] == 100.0 and row["holds"] is False
    rows = evidence_rows([a], [DeltaTarget("c", "rlhf raises chat", "rlhf", ("chat",))])
    assert rows[0]["holds"] is None and "not done" in rows[0]["note"]


def test_report_json_has_the_documented_shape(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from recipe.cli import app
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path))
    run = _run(tmp_path, "r", [0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0])
    run.update_run_json(profile="tiny")
    for stage, vals in (("sft", 0.0), ("if_rl", 50.0), ("mopd", 100.0)):
        run.write_validation(stage, {"if": vals}, ci={"if": {"score": vals, "ci_low": vals, "ci_high": vals, "n": 4}})
    r = CliRunner().invoke(app, ["report", "--run-id", "r", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data) == {"stages", "deltas", "teachers", "regressions", "claims"}
    assert data["stages"]["mopd"]["if"] == {"score": 100.0, "ci_low": 100.0, "ci_high": 100.0, "n": 4}
    # mopd vs its input if_rl: prompts 0 and 1 go 0 -> 1, prompts 2 and 3 stay 1: +50 points over 4 prompts
    assert data["deltas"]["mopd"]["input"] == "if_rl" and data["deltas"]["mopd"]["if"]["score"] == 50.0
    assert data["deltas"]["if_rl"]["input"] == "sft"
    assert data["teachers"]["mopd"]["teachers"]["if"]["stage"] == "sft"


def test_the_closing_claims_are_the_evidence_rows_of_this_run(tmp_path, monkeypatch):
    """`recipe run` ends with print_report: its claim lines are README's targets (evidence.TARGETS) evaluated on
    this run by evidence_rows, the code that pools README's table, and `recipe report --json` carries the same rows."""
    import io
    import json

    from rich.console import Console
    from typer.testing import CliRunner

    from recipe.cli import app
    from recipe.reporting import evidence
    from recipe.reporting.evidence import claim_line
    from recipe.reporting.run_report import print_report, report_data
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path))
    monkeypatch.setattr(evidence, "TARGETS", [DeltaTarget("a", "mopd raises if", "mopd", ("if",)),
                                              DeltaTarget("c", "rlhf raises chat", "rlhf", ("chat",)),
                                              TeacherMatchTarget("e", "within the teacher's CI")])
    run = _run(tmp_path, "r", [0] * 20, [1] * 20, [1] * 20)
    run.update_run_json(profile="tiny", seed=3)
    for stage in ("sft", "if_rl", "mopd"):
        run.write_validation(stage, {"if": 50.0}, ci={"if": {"score": 50.0, "ci_low": 40.0, "ci_high": 60.0, "n": 20}})
    data = report_data(run)
    assert data["claims"] == evidence_rows([run])
    out = io.StringIO()
    print_report(run, console=Console(file=out, width=300), data=data)
    text = out.getvalue()
    assert "README's claims on this run (seed 3" in text
    for row in data["claims"]:
        assert claim_line(row) in text
    assert "(a) mopd raises if: mopd - input, if +100.0 [+100.0, +100.0], n 20: holds" in text
    assert "(c) rlhf raises chat: not evaluated" in text
    assert "On this seed: hold a, e; not shown none." in text
    r = CliRunner().invoke(app, ["report", "--run-id", "r", "--json"])
    assert json.loads(r.output)["claims"] == json.loads(json.dumps(data["claims"]))


def _md_run(tmp_path, name, deltas: dict[str, list[tuple[int, int]]]):
    """sft -> multi_domain_rl with the tiny profile's config (it trains mcqa and tool_call); per domain the
    (before, after) reward of each prompt."""
    from recipe.config import load_config
    from recipe.config.loader import config_to_yaml
    run = RunDir(tmp_path / name)
    run.path.mkdir(parents=True, exist_ok=True)
    run.config_path.write_text(config_to_yaml(load_config("tiny")))
    run.write_manifest("sft", {"status": "done", "inputs": {}})
    run.write_manifest("multi_domain_rl", {"status": "done",
                                           "inputs": {"init_checkpoint": {"path": str(run.checkpoint_dir("sft"))}}})
    for stage, side in (("sft", 0), ("multi_domain_rl", 1)):
        write_samples(samples_path(run, stage), [{"domain": d, "item_id": f"{d}{i}", "sample": 0, "response": "",
                                                  "reward": pair[side]} for d, pairs in deltas.items()
                                                 for i, pair in enumerate(pairs)])
    return run


def test_claim_j_fails_only_on_an_untrained_domain_that_drops_beyond_its_interval_and_the_margin(tmp_path):
    from recipe.reporting.evidence import NoRegressionTarget, claim_line
    j = NoRegressionTarget("j", "multi-domain RL regresses no domain it does not train", "multi_domain_rl")
    # mcqa (trained) falls on every prompt: not j's business; code (untrained) keeps every prompt
    keep = _md_run(tmp_path, "keep", {"mcqa": [(1, 0)] * 20, "code": [(1, 1), (0, 0)] * 10})
    (row,) = j.evaluate([keep])
    assert row["holds"] is True and row["domain"] == "code" and row["regressed"] == []
    # code loses 10 of 20 prompts: -50 points, the whole interval below 0
    lose = _md_run(tmp_path, "lose", {"mcqa": [(0, 1)] * 20, "code": [(1, 0), (1, 1)] * 10})
    (row,) = j.evaluate([lose])
    assert row["holds"] is False and row["regressed"] == ["code"] and row["ci_high"] < 0
    assert "fails: code regressed" in claim_line(row)
    # one prompt of 40 lost: the interval may sit below 0, but the drop (-2.5) is inside the 3-point margin
    small = _md_run(tmp_path, "small", {"code": [(1, 0)] + [(1, 1)] * 39})
    (row,) = j.evaluate([small])
    assert row["score"] == pytest.approx(-2.5) and row["holds"] is True
