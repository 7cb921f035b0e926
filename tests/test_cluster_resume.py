"""resume: auto | never | from_step=N on top of NeMo-RL's unconditional auto-resume."""
from __future__ import annotations

import json

import pytest

from recipe.cluster.resume import plan_resume, step_dirs
from recipe.config import load_config
from recipe.cluster.render import render_stage
from recipe.cluster.nrl_yaml import load_yaml
from recipe.runs.layout import RunDir


def _steps(root, *ns, tmp=()):
    for n in ns:
        (root / "checkpoints" / f"step_{n}").mkdir(parents=True)
    for n in tmp:
        (root / "checkpoints" / f"tmp_step_{n}").mkdir(parents=True)


def test_auto_resumes_newest_complete_step(tmp_path):
    assert plan_resume(tmp_path, "auto").resume_step is None
    _steps(tmp_path, 10, 20, tmp=(30,))
    plan = plan_resume(tmp_path, "auto")
    assert plan.checkpoint_dir == tmp_path / "checkpoints" and plan.resume_step == 20


def test_never_uses_a_fresh_dir(tmp_path):
    _steps(tmp_path, 10)
    a = plan_resume(tmp_path, "never")
    b = plan_resume(tmp_path, "never")
    assert a.checkpoint_dir != b.checkpoint_dir and a.checkpoint_dir.is_dir() and not any(a.checkpoint_dir.iterdir())
    assert a.resume_step is None
    assert step_dirs(tmp_path / "checkpoints").keys() == {10}   # old run untouched


def test_from_step_moves_newer_steps_aside(tmp_path):
    _steps(tmp_path, 10, 20, 30)
    plan = plan_resume(tmp_path, "from_step=20")
    assert plan.resume_step == 20
    assert sorted(step_dirs(tmp_path / "checkpoints")) == [10, 20]
    assert len(plan.moved_aside) == 1 and plan.moved_aside[0].endswith("step_30")
    assert (tmp_path / plan.moved_aside[0].split(str(tmp_path) + "/")[1]).is_dir()   # never deleted
    with pytest.raises(FileNotFoundError, match=r"available steps: \[10, 20\]"):
        plan_resume(tmp_path, "from_step=25")
    with pytest.raises(ValueError):
        plan_resume(tmp_path, "sometimes")


@pytest.mark.parametrize("policy", ["never", "from_step=5"])
def test_resume_policy_reaches_rendered_config(tmp_path, policy):
    run = RunDir(tmp_path / "run")
    nemo = run.stage_dir("if_rl") / "nemo_rl"
    (nemo / "checkpoints" / "step_5").mkdir(parents=True)
    (nemo / "checkpoints" / "step_9").mkdir(parents=True)
    cfg = load_config("paper", overrides=[f"cluster.resume={policy}", "cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"])
    res = render_stage(cfg, run, "if_rl", allow_unpinned=True, allow_dirty=True)
    ckpt = load_yaml(res.jobs[0].config_path)["checkpointing"]["checkpoint_dir"]
    prov = json.loads(res.provenance_path.read_text())["jobs"]["if_rl"]["resume"]
    if policy == "never":
        assert ckpt != str(nemo / "checkpoints") and "checkpoints-" in ckpt and prov["step"] is None
    else:
        assert ckpt == str(nemo / "checkpoints") and prov["step"] == 5
        assert sorted(step_dirs(nemo / "checkpoints")) == [5]
