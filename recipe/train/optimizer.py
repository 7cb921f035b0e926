"""The stages' optimizer: AdamW with the stage's learning rate, betas and weight decay (RECIPE.md §3; NeMo-RL's
``policy.optimizer``). PyTorch's fused kernel (one launch for every parameter, no host sync) runs whenever the
parameters are on CUDA, and on the CPU where ``run.fused_optimizer`` asks for it; the per-tensor ``foreach`` one
otherwise. The same update up to float rounding; on the CPU the fused one is 3-4x faster a step on SmolLM2's 135M
parameters on one thread (docs/SPEED.md)."""
from __future__ import annotations

import torch


def adamw(params, scfg, fused: bool) -> torch.optim.AdamW:
    """AdamW for a stage config with ``lr``, ``adam_betas`` and ``weight_decay``; fused on CUDA or when ``fused``."""
    params = list(params)
    on_cuda = bool(params) and all(p.device.type == "cuda" for p in params)
    impl = {"fused": True} if fused or on_cuda else {}
    return torch.optim.AdamW(params, lr=scfg.lr, betas=tuple(scfg.adam_betas), weight_decay=scfg.weight_decay, **impl)
