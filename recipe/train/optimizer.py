"""The stages' optimizer: AdamW with the stage's learning rate, betas and weight decay (RECIPE.md §3; NeMo-RL's
``policy.optimizer``). ``run.fused_optimizer`` picks PyTorch's fused kernel over the per-tensor ``foreach`` one: the
same update up to float rounding, 3-4x faster a step on SmolLM2's 135M parameters on one CPU thread
(docs/SPEED.md)."""
from __future__ import annotations

import torch


def adamw(params, scfg, fused: bool) -> torch.optim.AdamW:
    """AdamW for a stage config with ``lr``, ``adam_betas`` and ``weight_decay``."""
    impl = {"fused": True} if fused else {}
    return torch.optim.AdamW(params, lr=scfg.lr, betas=tuple(scfg.adam_betas), weight_decay=scfg.weight_decay, **impl)
