"""Advantage estimators, one class per estimator behind one signature (as NeMo-RL's
``algorithms/advantage_estimator.py``): ``compute_advantage(batch) -> advantages_BS`` ([B, S], zero outside the
response mask). Picked by name from ``ESTIMATORS``; unknown names raise.

- ``grpo`` (paper §4.1.2 Eq. 1, RECIPE.md §5): A_i = (r_i - mean_group r) / std_group r, the same for every
  token of response i. Baseline = plain group mean (not leave-one-out); std = population std of the group.
  Groups with zero std give A = 0 (and are removed earlier by dynamic filtering when it is on).
- ``opd`` (MOPD, paper §4.4 Eq. 2, RECIPE.md §6): a_t = log pi_teacher(y_t|s_t) - log pi_train(y_t|s_t) on the
  sampled token only, detached (stop-gradient). The teacher is chosen per example by its domain. With a discount
  g > 0 (``mopd.kl_discount``), a_t = sum_{t' >= t} g^(t'-t) (log pi_teacher - log pi_train)(y_t'): the gradient of
  the whole answer's reverse KL when g = 1, where Eq. 2 charges a token only for itself and not for the text it
  leads into (e.g. not stopping where the teacher would).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass
class AdvantageInputs:
    rewards_B: torch.Tensor | None          # [B] scalar reward per response (grpo)
    group_ids_B: torch.Tensor | None        # [B] prompt-group index per response (grpo)
    mask_BS: torch.Tensor                   # [B, S] 1 on trained response tokens
    train_logprobs_BS: torch.Tensor | None = None    # [B, S] log pi_train(y_t) (opd)
    teacher_logprobs_BS: torch.Tensor | None = None  # [B, S] log pi_teacher(y_t) (opd)
    discount: float = 0.0                            # opd: 0 = Eq. 2 (each token's own log-ratio)


class AdvantageEstimator(Protocol):
    name: str

    def compute_advantage(self, inp: AdvantageInputs) -> torch.Tensor: ...


class GRPOAdvantage:
    name = "grpo"

    def compute_advantage(self, inp: AdvantageInputs) -> torch.Tensor:
        if inp.rewards_B is None or inp.group_ids_B is None:
            raise ValueError("grpo needs rewards_B and group_ids_B")
        r, g = inp.rewards_B.float(), inp.group_ids_B
        adv_B = torch.zeros_like(r)
        for gid in torch.unique(g):
            sel = g == gid
            mean, std = r[sel].mean(), r[sel].std(unbiased=False)
            adv_B[sel] = 0.0 if std < 1e-8 else (r[sel] - mean) / std
        return adv_B[:, None] * inp.mask_BS


class OPDAdvantage:
    name = "opd"

    def compute_advantage(self, inp: AdvantageInputs) -> torch.Tensor:
        if inp.train_logprobs_BS is None or inp.teacher_logprobs_BS is None:
            raise ValueError("opd needs train_logprobs_BS and teacher_logprobs_BS")
        a_BS = (inp.teacher_logprobs_BS - inp.train_logprobs_BS).detach() * inp.mask_BS
        if inp.discount > 0:
            a_BS = discounted_to_go(a_BS, inp.discount) * inp.mask_BS
        return a_BS


def discounted_to_go(x_BS: torch.Tensor, g: float) -> torch.Tensor:
    """out[:, t] = sum_{t' >= t} g^(t'-t) x[:, t'] (a reverse scan over the columns; masked entries of x are 0)."""
    out = torch.zeros_like(x_BS)
    acc = torch.zeros_like(x_BS[:, 0])
    for t in range(x_BS.shape[1] - 1, -1, -1):
        acc = x_BS[:, t] + g * acc
        out[:, t] = acc
    return out


ESTIMATORS: dict[str, type] = {"grpo": GRPOAdvantage, "opd": OPDAdvantage}


def get_estimator(name: str) -> AdvantageEstimator:
    try:
        return ESTIMATORS[name]()
    except KeyError:
        raise ValueError(f"unknown advantage estimator {name!r}; choose one of {sorted(ESTIMATORS)} "
                         f"(set <stage>.advantage_estimator)") from None
