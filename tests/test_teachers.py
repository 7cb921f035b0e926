"""Teachers are chosen by the record: best validation checkpoint per domain, ties keep the earlier one, and MOPD's
routing slots resolve from scores.json / teachers.json."""
from __future__ import annotations

import json

import pytest

from recipe.pipeline.teachers import record_scores, resolve_teacher, resolve_teachers
from recipe.runs import RunDir


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
    assert t["math"]["checkpoint"] == str(run.checkpoint_dir("sft")) and t["math"]["score"] == 40.0
    assert json.loads(run.teachers_path.read_text()) == t
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
