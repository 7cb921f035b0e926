"""The rules of one RL step, as pure functions on tensors (the loop in ``recipe.train.rl`` only calls them).

Shapes: P prompt groups of G responses each (B = P * G rows, group-major), S tokens.

- ``unfinished_reward_zero``: an unfinished (truncated) response gets reward 0 (IF-RL, RECIPE.md §4.1 row 1:
  "unfinished -> reward 0"; ``<stage>.overlong_reward_zero``).
- ``overlong_loss_mask``: overlong filtering (DAPO; RECIPE.md §4.2 "Overlong" column): a truncated response gets
  no loss, but its reward *stays* in its group's mean and std (``<stage>.overlong_filtering``). The advantage is
  therefore computed on whole groups first and the mask is applied afterwards (``trainable_rows``).
- ``keep_groups``: dynamic filtering drops groups whose G rewards are all equal (zero std, no signal;
  ``dynamic_filtering``); the agentless-SWE prompt mask drops groups whose best reward is <= a threshold
  (RECIPE.md §5: "max reward <= 0.5 -> no loss"; ``prompt_mask_max_reward``).
- ``refill``: dynamic filtering keeps the batch full as DAPO does (NeMo-RL ``use_dynamic_sampling``): after the
  first round of ``target`` prompts, further rounds sample the missing number of prompts until ``target`` groups
  are kept or ``max_rounds`` rounds were drawn (NeMo-RL ``dynamic_sampling_max_gen_batches``); what is still
  missing is the logged ``shortfall`` (NeMo-RL raises there; we train on what we have and log it). A round can
  oversample (``batch_multiplier``, NeMo-RL's key of that name), so that one round usually fills the batch.
- ``trainable_rows``: the rows that enter the loss: in a kept group and with at least one unmasked token. Empty ->
  "nothing left to train": the step is logged with ``updated: false`` and the weights do not move.
- ``teacher_rows``: MOPD routes every response to its domain's teacher (paper §4.4: one teacher per example, by
  prompt domain); rows that share a teacher checkpoint are scored in one forward pass.
- ``opd_domain_sums`` / ``opd_domain_means``: MOPD per domain (reverse KL, the teacher's log-prob of the student's
  tokens, the importance mask's dropped share, the advantage on each answer's last token), logged beside the
  batch-wide figures so that a domain the student drifts away from is seen in its own curve.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Hashable

import torch


def unfinished_reward_zero(rewards_B: torch.Tensor, finished_B: torch.Tensor) -> torch.Tensor:
    return torch.where(finished_B.bool(), rewards_B, torch.zeros_like(rewards_B))


def overlong_loss_mask(mask_BS: torch.Tensor, finished_B: torch.Tensor) -> torch.Tensor:
    return mask_BS * finished_B.bool()[:, None].to(mask_BS.dtype)


def keep_groups(rewards_PG: torch.Tensor, *, dynamic_filtering: bool,
                prompt_mask_max_reward: float | None = None) -> torch.Tensor:
    keep_P = torch.ones(rewards_PG.shape[0], dtype=torch.bool)
    if dynamic_filtering:
        keep_P &= rewards_PG.std(1, unbiased=False) > 1e-8
    if prompt_mask_max_reward is not None:
        keep_P &= rewards_PG.max(1).values > prompt_mask_max_reward
    return keep_P


def trainable_rows(keep_P: torch.Tensor, group_size: int, loss_mask_BS: torch.Tensor) -> torch.Tensor:
    """Row indices (sorted) that enter the loss; an empty tensor means nothing is left to train."""
    keep_B = keep_P.repeat_interleave(group_size) & (loss_mask_BS.sum(1) > 0)
    return keep_B.nonzero().flatten()


@dataclass
class RefillResult:
    selected: list[tuple[int, int]] = field(default_factory=list)  # (round, group-in-round), in draw order
    rounds: int = 0
    sampled_groups: int = 0
    target: int = 0

    @property
    def shortfall(self) -> int:
        return self.target - len(self.selected)


def refill(draw_round: Callable[[int, int], torch.Tensor], *, target: int, max_rounds: int,
           enabled: bool, multiplier: float = 1.0) -> RefillResult:
    """Draw rounds until ``target`` groups are kept. ``draw_round(round, n_prompts)`` samples and scores
    ``n_prompts`` new groups and returns their keep mask [n_prompts]. Round 0 draws ``target`` prompts; a later
    round draws the current shortfall; with ``enabled``, both times ``multiplier`` (rounded up). Without ``enabled``
    (no dynamic filtering) there is exactly one round of ``target`` prompts. Kept groups beyond ``target`` are not
    selected (first come, first kept)."""
    if target < 1 or max_rounds < 1 or multiplier < 1.0:
        raise ValueError(f"refill needs target >= 1, max_rounds >= 1 and multiplier >= 1, got {target}, {max_rounds}, "
                         f"{multiplier}")
    res = RefillResult(target=target)

    def oversampled(k: int) -> int:
        return math.ceil(k * multiplier - 1e-9) if enabled else k

    n = oversampled(target)
    while res.rounds < (max_rounds if enabled else 1):
        keep = draw_round(res.rounds, n)
        if keep.shape != (n,):
            raise ValueError(f"draw_round returned a keep mask of shape {tuple(keep.shape)}, expected ({n},)")
        res.sampled_groups += n
        res.selected += [(res.rounds, int(g)) for g in keep.nonzero().flatten().tolist()][: target - len(res.selected)]
        res.rounds += 1
        if res.shortfall == 0:
            break
        n = oversampled(res.shortfall)
    return res


def teacher_rows(domains_B: list[str], teachers: dict[str, object],
                 key: Callable[[object], Hashable] = id) -> list[tuple[object, list[int]]]:
    """[(teacher, row indices)] with one entry per distinct teacher, in first-use order."""
    missing = sorted({d for d in domains_B if d not in teachers})
    if missing:
        raise KeyError(f"no MOPD teacher for domains {missing} (mopd.teacher_routing covers {sorted(teachers)})")
    groups: dict[Hashable, tuple[object, list[int]]] = {}
    for i, d in enumerate(domains_B):
        t = teachers[d]
        groups.setdefault(key(t), (t, []))[1].append(i)
    return list(groups.values())


def opd_domain_sums(domains_B: list[str], train_lp_BS: torch.Tensor, teacher_lp_BS: torch.Tensor,
                    inf_lp_BS: torch.Tensor, mask_BS: torch.Tensor, *, low: float, high: float) -> dict[str, float]:
    """MOPD's view per domain, as sums over these rows (``sum/<what>/<domain>``, added across micro-batches and turned
    into means by ``opd_domain_means``): trained tokens, the sampled reverse KL (log pi_train - log pi_teacher), the
    tokens the importance mask drops, the teacher's log-prob of the student's tokens, and per row the advantage on
    its last trained token (the end-of-answer token when the answer finished: a teacher that would not stop there
    pushes the student to write on)."""
    ratio_BS = torch.exp(train_lp_BS - inf_lp_BS)
    dropped_BS = (((ratio_BS < low) | (ratio_BS > high)).float() * mask_BS)
    n_B = mask_BS.sum(1)
    last_B = (torch.arange(mask_BS.shape[1], device=mask_BS.device) * mask_BS.bool()).argmax(1)
    rows_B = torch.arange(mask_BS.shape[0], device=mask_BS.device)
    last_adv_B = (teacher_lp_BS - train_lp_BS)[rows_B, last_B] * (n_B > 0)
    per_row = {"tokens": n_B, "reverse_kl": ((train_lp_BS - teacher_lp_BS) * mask_BS).sum(1),
               "dropped": dropped_BS.sum(1), "teacher_logprob": (teacher_lp_BS * mask_BS).sum(1),
               "rows": (n_B > 0).float(), "last_token_adv": last_adv_B}
    out: dict[str, float] = {}
    for d in sorted(set(domains_B)):
        sel = torch.tensor([x == d for x in domains_B], device=mask_BS.device)
        for what, v in per_row.items():
            out[f"sum/{what}/{d}"] = float(v[sel].sum())
    return out


def opd_domain_means(metrics: dict) -> dict:
    """``metrics`` with the ``sum/`` keys of ``opd_domain_sums`` replaced by per-domain means: ``reverse_kl/<d>``
    and ``teacher_logprob/<d>`` (per token), ``masked_frac/<d>`` (share of tokens dropped), ``last_token_adv/<d>``
    (per row)."""
    sums = {k: v for k, v in metrics.items() if k.startswith("sum/")}
    out = {k: v for k, v in metrics.items() if not k.startswith("sum/")}
    for d in sorted({k.rsplit("/", 1)[1] for k in sums}):
        tokens, rows = sums.get(f"sum/tokens/{d}", 0.0), sums.get(f"sum/rows/{d}", 0.0)
        if tokens:
            out[f"reverse_kl/{d}"] = sums[f"sum/reverse_kl/{d}"] / tokens
            out[f"teacher_logprob/{d}"] = sums[f"sum/teacher_logprob/{d}"] / tokens
            out[f"masked_frac/{d}"] = sums[f"sum/dropped/{d}"] / tokens
        if rows:
            out[f"last_token_adv/{d}"] = sums[f"sum/last_token_adv/{d}"] / rows
    return out
