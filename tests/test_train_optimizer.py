"""The stages' AdamW (recipe.train.optimizer): the fused kernel where the profile asks for it (small), the foreach
one otherwise (tiny, whose evidence was measured with it); both give the same update up to float rounding."""
import copy

import torch

from recipe.config import load_config
from recipe.train.optimizer import adamw


def _steps(model, scfg, fused: bool):
    model = copy.deepcopy(model)
    opt = adamw(model.parameters(), scfg, fused)
    for i in range(3):
        torch.manual_seed(i)
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return opt, [p.detach() for p in model.parameters()]


def test_fused_and_foreach_adamw_agree_and_the_profiles_pick_them():
    small, tiny = load_config("small"), load_config("tiny")
    assert small.run.fused_optimizer and not tiny.run.fused_optimizer
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    scfg = small.if_rl
    fused_opt, fused = _steps(model, scfg, True)
    plain_opt, plain = _steps(model, scfg, False)
    assert fused_opt.defaults["fused"] and not plain_opt.defaults["fused"]
    assert fused_opt.defaults["lr"] == scfg.lr and fused_opt.defaults["weight_decay"] == scfg.weight_decay
    moved = [(a - b).abs().max().item() for a, b in zip(fused, model.parameters())]
    assert min(moved) > 0  # the steps moved every tensor
    for a, b in zip(fused, plain):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-5)
