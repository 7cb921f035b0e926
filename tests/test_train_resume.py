"""Resume is resume, not restart: a stage killed after a step checkpoint restores model + optimizer, says on stderr
where it resumes, runs only the remaining steps and ends where an uninterrupted run ends (SFT, GRPO and MOPD).
Plus save/load round trips of the step state, including the ``.old`` copy left by a kill between the two renames."""
from __future__ import annotations

import os

import pytest
import torch

from _step_hooks import Killed, die_after_step, record_steps
from _tiny_stage import params, sharper_teacher, tiny_context

from recipe.train import rl
from recipe.train.sft import train_sft
from recipe.train.state import load_state, resume_step, save_state

TIMING = {"time_s", "gen_time_s"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---- save/load round trip -------------------------------------------------------------------------------------

def _model_and_stepped_opt(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95))
    for _ in range(3):  # Adam moments and step counts are non-trivial
        model(torch.randn(5, 4)).pow(2).sum().backward()
        opt.step()
        opt.zero_grad()
    return model, opt


def _next_update(model, opt) -> dict:
    torch.manual_seed(123)
    model(torch.randn(5, 4)).pow(2).sum().backward()
    opt.step()
    opt.zero_grad()
    return {k: v.clone() for k, v in model.state_dict().items()}


def _assert_same_optimizer_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert set(sa["state"]) == set(sb["state"]) and sa["state"]
    for pid in sa["state"]:
        assert set(sa["state"][pid]) == set(sb["state"][pid]) == {"step", "exp_avg", "exp_avg_sq"}
        for k, v in sa["state"][pid].items():
            assert torch.equal(torch.as_tensor(v), torch.as_tensor(sb["state"][pid][k])), (pid, k)


def test_state_round_trip_restores_model_and_optimizer_exactly(tmp_path):
    model, opt = _model_and_stepped_opt(0)
    save_state(tmp_path / "state", model, opt, 3)
    fresh, fresh_opt = _model_and_stepped_opt(1)  # other weights, other moments
    assert not torch.equal(fresh[0].weight, model[0].weight)
    assert load_state(tmp_path / "state", fresh, fresh_opt) == 3
    for k, v in model.state_dict().items():
        assert torch.equal(v, fresh.state_dict()[k]), k
    _assert_same_optimizer_state(opt, fresh_opt)
    # the restored optimizer state is used: the next update is identical
    a, b = _next_update(model, opt), _next_update(fresh, fresh_opt)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert {p.name for p in (tmp_path / "state").iterdir()} == {"model.safetensors", "optimizer.safetensors",
                                                                "state.json"}


def test_kill_between_renames_recovers_the_previous_state_from_dot_old(tmp_path):
    model, opt = _model_and_stepped_opt(0)
    save_state(tmp_path / "state", model, opt, 2)
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    _next_update(model, opt)
    # replace_dir's first rename happened (state -> state.old), the second (state.tmp -> state) did not
    os.replace(tmp_path / "state", tmp_path / "state.old")
    (tmp_path / "state.tmp").mkdir()  # a half-written newer state must not be read
    fresh, fresh_opt = _model_and_stepped_opt(1)
    assert load_state(tmp_path / "state", fresh, fresh_opt) == 2
    assert all(torch.equal(saved[k], v) for k, v in fresh.state_dict().items())


def test_a_later_save_replaces_the_state_and_leaves_no_old_copy(tmp_path):
    model, opt = _model_and_stepped_opt(0)
    save_state(tmp_path / "state", model, opt, 2)
    _next_update(model, opt)
    save_state(tmp_path / "state", model, opt, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]
    fresh, fresh_opt = _model_and_stepped_opt(1)
    assert load_state(tmp_path / "state", fresh, fresh_opt) == 4
    _assert_same_optimizer_state(opt, fresh_opt)


def test_without_state_the_trainer_starts_at_step_zero_and_says_so(tmp_path, capsys):
    model, opt = _model_and_stepped_opt(0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert load_state(tmp_path / "state", model, opt) is None
    assert resume_step(tmp_path / "state", model, opt, "sft", 6) == 0
    assert "[sft] starting at step 0 of 6 (no saved state" in capsys.readouterr().err
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


# ---- a killed stage resumes (SFT, GRPO, MOPD) --------------------------------------------------------------

STAGES = {
    # stage: overrides; 6 steps with a state after steps 2 and 4; the kill lands after step index 4 is logged,
    # so the state on disk covers 4 steps and the re-run must run exactly steps 4 and 5.
    "sft": ["sft.steps=6", "sft.save_every=2", "sft.global_batch=8", "sft.warmup_steps=2"],
    "if_rl": ["if_rl.steps=6", "if_rl.save_every=2", "if_rl.prompts_per_step=2", "if_rl.generations_per_prompt=4",
              "if_rl.max_response_tokens=8", "if_rl.teacher_candidate_every=0", "if_rl.lr=1e-2"],
    "mopd": ["mopd.steps=6", "mopd.save_every=2", "mopd.prompts_per_step=4", "mopd.max_response_tokens=8",
             "mopd.warmup_steps=0", "mopd.lr=1e-3"],
}


def _train(ctx):
    scfg = ctx.cfg.stage(ctx.stage)
    if ctx.stage == "sft":
        return train_sft(ctx, scfg)
    teachers = None
    if ctx.stage == "mopd":
        teacher = sharper_teacher(ctx.model)  # built from the stage's initial weights, identical in every run
        teachers = {d: teacher for d in scfg.domains}
    return rl.train_rl(ctx, scfg, teachers=teachers)


def _rows(ctx) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in ctx.run.read_metrics(ctx.stage)]


@pytest.mark.parametrize("stage", list(STAGES))
def test_killed_stage_resumes_after_its_last_saved_step(tmp_path, monkeypatch, capsys, stage):
    ref = tiny_context(tmp_path, stage, STAGES[stage], run_name="ref")
    _train(ref)
    ref_rows, ref_params = _rows(ref), params(ref.model)
    assert [r["step"] for r in ref_rows] == list(range(6))

    victim = tiny_context(tmp_path, stage, STAGES[stage], run_name="victim")
    die_after_step(monkeypatch, victim.run, 4)
    with pytest.raises(Killed):
        _train(victim)
    monkeypatch.undo()
    assert len(victim.run.read_metrics(stage)) == 5  # steps 0..4 logged, state saved after 4 steps
    capsys.readouterr()

    # the re-run: a new process would rebuild the stage's input model; so do we (untrained weights again)
    again = tiny_context(tmp_path, stage, STAGES[stage], run_name="victim")
    ran = record_steps(monkeypatch, again.run)
    _train(again)
    assert ran == [4, 5], "the re-run must run only the steps after the saved state (a restart runs 0..5)"
    assert f"[{stage}] resuming at step 4 of 6" in capsys.readouterr().err
    assert _rows(again) == ref_rows
    for name, value in params(again.model).items():
        assert torch.allclose(value, ref_params[name], atol=1e-6), name
