"""Step-state saves on a time budget (recipe.train.state.SaveClock, ``run.state_save_every_s``) and the fused AdamW
on CUDA (recipe.train.optimizer)."""
import pytest
import torch

from recipe.config import load_config
from recipe.train import state
from recipe.train.optimizer import adamw


def test_saves_follow_the_time_budget_when_set_and_the_step_count_otherwise(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(state.time, "monotonic", lambda: now[0])
    clock = state.SaveClock(every=2, every_s=60.0)
    due = []
    for step_done, t in zip(range(1, 8), (10, 50, 61, 70, 119, 125, 200)):
        now[0] = 100.0 + t
        if clock.due(step_done, total=7):
            due.append(step_done)
            clock.saved()
    assert due == [3, 6]          # 61 s after the start, then 64 s after that save; never after the last step
    counted = state.SaveClock(every=2, every_s=None)
    assert [s for s in range(1, 8) if counted.due(s, total=7)] == [2, 4, 6]
    assert load_config("small").run.state_save_every_s == 120 and load_config("tiny").run.state_save_every_s is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: the fused kernel is picked for CUDA parameters")
def test_adamw_is_fused_on_cuda_whatever_the_setting():
    model = torch.nn.Linear(4, 4).cuda()
    assert adamw(model.parameters(), load_config("tiny").if_rl, fused=False).defaults["fused"]
