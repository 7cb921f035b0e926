"""Teachers are chosen by the record: best validation checkpoint per domain, ties keep the earlier one, and MOPD's
routing slots resolve from scores.json / teachers.json."""
from __future__ import annotations

import json

import pytest

from recipe.runs import RunDir
from recipe.runs.teachers import record_scores, resolve_teacher, resolve_teachers


@pytest.fixture
def run(tmp_path):
    r = RunDir(tmp_path / "r")
    for stage in ("sft", "if_rl", "multi_domain_rl"):
        r.write_manifest(stage, {"status": "done"})
    return r


def test_best_checkpoint_per_domain_and_ties(run):
    record_scores(run, "sft", {"math": 40.0, "instruction_following": 20.0, "mcqa": 30.0})
    record_scores(run, "if_rl", {"math": 35.0, "instruction_following": 60.0, "mcqa": 30.0})
    t = record_scores(run, "multi_domain_rl", {"math": 38.0, "instruction_following": 55.0, "mcqa": 70.0})
    assert t["math"]["stage"] == "sft"                 # SFT stays the math teacher: the record says so
    assert t["instruction_following"]["stage"] == "if_rl"
    assert t["mcqa"]["stage"] == "multi_domain_rl"
    assert t["math"]["checkpoint"] == "01_sft/checkpoint" and t["math"]["score"] == 40.0
    assert run.resolve_path(t["math"]["checkpoint"]) == run.checkpoint_dir("sft")
    assert json.loads(run.teachers_path.read_text()) == {"best_so_far": t}
    m = json.loads(run.scores_path.read_text())
    assert list(m["checkpoints"]) == ["sft", "if_rl", "multi_domain_rl"]


def test_tie_keeps_earlier_checkpoint(run):
    record_scores(run, "sft", {"mcqa": 30.0})
    t = record_scores(run, "if_rl", {"mcqa": 30.0})
    assert t["mcqa"]["stage"] == "sft"


def test_routing_slots(run):
    record_scores(run, "sft", {"math": 40.0, "mcqa": 10.0})
    record_scores(run, "if_rl", {"math": 50.0, "mcqa": 20.0})
    record_scores(run, "multi_domain_rl", {"math": 45.0, "mcqa": 25.0})
    assert resolve_teacher(run, "math", "best")["stage"] == "if_rl"
    assert resolve_teacher(run, "math", "stage:sft")["stage"] == "sft"
    assert resolve_teacher(run, "math", "best_of:sft,multi_domain_rl")["stage"] == "multi_domain_rl"
    assert resolve_teacher(run, "mcqa", "best_of:if_rl,multi_domain_rl")["score"] == 25.0
    with pytest.raises(ValueError, match="cluster backend"):
        resolve_teacher(run, "math", "branch:rlhf_from_sft")
    with pytest.raises(ValueError, match="unknown teacher slot"):
        resolve_teacher(run, "math", "worst")
    with pytest.raises(ValueError, match="no teacher for domain"):
        resolve_teacher(run, "tool_call", "best")
    with pytest.raises(ValueError, match="no teacher slot"):
        resolve_teachers(run, {"math": "best"}, ["math", "mcqa"])


def _selection(run, stage, cands):
    """Write a stage's selection.json: {name: (step, {domain: score})} with a +-5 point CI on each score."""
    from recipe.runs.teachers import selection_path
    from recipe.runs.layout import write_json_atomic
    write_json_atomic(selection_path(run, stage), {
        name: {"stage": stage, "step": step, "checkpoint": f"/ck/{stage}/{name}",
               "scores": {d: {"score": x, "ci_low": x - 5, "ci_high": x + 5, "n": 100} for d, x in sc.items()}}
        for name, (step, sc) in cands.items()})


def test_paper_routing_one_multi_domain_teacher_by_group_average(run):
    from recipe.runs.teachers import routing_record
    run.write_manifest("rlhf_branch", {"status": "done"})
    group = "select:if_rl,multi_domain_rl"
    routing = {"math": "stage:sft", "chat": "stage:rlhf_branch", "instruction_following": group, "mcqa": group,
               "tool_call": group}
    # selection-split scores (IF, MCQA, tool): averages if_rl@25 (60+30+30)/3 = 40, if_rl@final (70+20+21)/3 = 37,
    # md@20 (50+45+40)/3 = 45, md@final (40+50+42)/3 = 44 -> md@20 is the one teacher, although if_rl@final is
    # the best on IF alone and md@final the best on MCQA alone
    _selection(run, "if_rl", {"step_000025": (25, {"instruction_following": 60, "mcqa": 30, "tool_call": 30}),
                              "final": (50, {"instruction_following": 70, "mcqa": 20, "tool_call": 21})})
    _selection(run, "multi_domain_rl", {"step_000020": (20, {"instruction_following": 50, "mcqa": 45, "tool_call": 40}),
                                        "final": (40, {"instruction_following": 40, "mcqa": 50, "tool_call": 42})})
    rec = routing_record(run, routing, list(routing))
    t = rec["teachers"]
    assert t["math"]["stage"] == "sft" and t["chat"]["stage"] == "rlhf_branch"
    assert {t[d]["checkpoint"] for d in ("instruction_following", "mcqa", "tool_call")} == {"/ck/multi_domain_rl/step_000020"}
    g = rec["groups"][group]
    assert g["pick"] == "multi_domain_rl@step_000020" and g["domains"] == ["instruction_following", "mcqa", "tool_call"]
    assert [c["name"] for c in g["candidates"]] == ["if_rl@step_000025", "if_rl@final", "multi_domain_rl@step_000020",
                                                    "multi_domain_rl@final"]
    avg = g["candidates"][2]["average"]
    # CI of the average: se_d = 5 / 1.96 per domain, se = sqrt(3) * se_d / 3 -> half-width 5 / sqrt(3) = 2.89
    assert avg["score"] == 45.0 and avg["ci_high"] - avg["score"] == pytest.approx(5 / 3 ** 0.5, abs=0.01)
    assert avg["n"] == 300


def test_select_group_ties_keep_the_earlier_candidate_and_missing_scores_fail(run):
    from recipe.runs.teachers import select_group
    _selection(run, "if_rl", {"final": (50, {"mcqa": 30, "tool_call": 30})})
    _selection(run, "multi_domain_rl", {"final": (40, {"mcqa": 40, "tool_call": 20})})
    assert select_group(run, "select:if_rl,multi_domain_rl", ["mcqa", "tool_call"])["pick"] == "if_rl@final"
    with pytest.raises(ValueError, match="not scored on"):
        select_group(run, "select:if_rl,multi_domain_rl", ["mcqa", "instruction_following"])
    with pytest.raises(ValueError, match="no selection-split scores"):
        select_group(run, "select:sft", ["mcqa"])


def test_a_moved_run_still_finds_its_teachers(run, tmp_path):
    """teachers.json and selection.json store checkpoints relative to the run directory: a run copied to another
    disk (or shared with a colleague) resolves its teachers inside the copy, not at the old absolute path."""
    import shutil
    from recipe.runs.teachers import record_selection, routing_record
    record_scores(run, "sft", {"math": 40.0, "mcqa": 10.0})
    record_scores(run, "if_rl", {"math": 50.0, "mcqa": 20.0})
    record_selection(run, "if_rl", {"final": {"step": 10, "checkpoint": str(run.checkpoint_dir("if_rl")),
                                              "scores": {"mcqa": {"score": 20.0, "ci_low": 15, "ci_high": 25,
                                                                  "n": 100}}}})
    routing_record(run, {"math": "stage:sft", "mcqa": "select:if_rl"}, ["math", "mcqa"])
    moved = RunDir(shutil.copytree(run.path, tmp_path / "elsewhere" / "r"))
    shutil.rmtree(run.path)
    stored = json.dumps(json.loads(moved.teachers_path.read_text())) + moved.stage_dir("if_rl").joinpath(
        "selection.json").read_text()
    assert str(run.path) not in stored
    for domain, slot in (("math", "stage:sft"), ("mcqa", "select:if_rl"), ("math", "best")):
        resolved = moved.resolve_path(resolve_teacher(moved, domain, slot, [domain])["checkpoint"])
        assert resolved.parent.parent == moved.path
