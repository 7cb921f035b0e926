"""Losses. Each returns (loss, metrics). Shapes: B responses, S tokens; ``mask_BS`` marks trained tokens.

- ``sft_loss``: cross-entropy on assistant tokens only, mean over those tokens (or over ``normalizer`` tokens,
  when a batch is split into micro-batches that share one token mean).
- ``grpo_loss`` (RECIPE.md §5): L = -(1 / sum_i |y_i|) * sum_i sum_t A_i * log pi(y_it); token-level over the whole
  batch (DAPO-style), strictly on-policy (one update per rollout batch, so the PPO ratio is 1 and clipping never
  activates). Optional KL to a reference (k3 estimator, token mean) when ``kl_coef > 0`` (RLHF: 0.03).
- ``mopd_loss`` (paper Eq. 3-4, RECIPE.md §6): r_t = pi_train/pi_inf, w_t = sg[r_t] * 1[low <= r_t <= high]
  (out-of-band tokens get weight 0, not clipped), L = -E_y[(1/|V(y)|) sum_t w_t sg[a_t] log pi_train(y_t)]
  (per-sequence token mean, then mean over sequences); ``token_level`` normalisation is the tested fallback.

``normalizer`` (GRPO and MOPD as for SFT): the whole batch's count (tokens; MOPD ``per_sequence``: sequences with a
trained token) when the rows given are one micro-batch of it, so that the micro-batches' losses and gradients add up
to the one-pass ones (``recipe.train.micro_batches``).
"""
from __future__ import annotations

import torch


def sft_loss(logprobs_BS: torch.Tensor, mask_BS: torch.Tensor, normalizer: int | None = None):
    n = mask_BS.sum().clamp(min=1) if normalizer is None else max(1, normalizer)
    loss = -(logprobs_BS * mask_BS).sum() / n
    return loss, {"loss": loss.item(), "tokens": int(mask_BS.sum().item())}


def grpo_loss(logprobs_BS, advantages_BS, mask_BS, *, ref_logprobs_BS=None, kl_coef: float = 0.0,
              normalizer: int | None = None):
    n_tokens = mask_BS.sum().clamp(min=1) if normalizer is None else max(1, normalizer)
    pg = -(advantages_BS * logprobs_BS * mask_BS).sum() / n_tokens
    metrics = {"pg_loss": pg.item()}
    loss = pg
    if kl_coef > 0:
        if ref_logprobs_BS is None:
            raise ValueError("kl_coef > 0 needs reference log-probs")
        log_ratio = ref_logprobs_BS - logprobs_BS
        kl = ((torch.exp(log_ratio) - log_ratio - 1) * mask_BS).sum() / n_tokens
        loss = loss + kl_coef * kl
        metrics["kl"] = kl.item()
    metrics["loss"] = loss.item()
    return loss, metrics


def masked_mean(per_token_BS, mask_BS, normalization: str = "per_sequence", normalizer: int | None = None):
    """MOPD's mean of a per-token quantity: per sequence (each row's token mean, then the mean over rows; Eq. 4) or
    over all tokens (token_level); ``normalizer`` replaces the row / token count when these rows are one
    micro-batch of a larger batch."""
    if normalization == "per_sequence":
        n_B = mask_BS.sum(dim=1)
        keep_B = n_B > 0
        if not keep_B.any():
            return per_token_BS.sum() * 0
        seq_B = per_token_BS.sum(dim=1)[keep_B] / n_B[keep_B]
        return seq_B.mean() if normalizer is None else seq_B.sum() / max(1, normalizer)
    if normalization == "token_level":
        return per_token_BS.sum() / (mask_BS.sum().clamp(min=1) if normalizer is None else max(1, normalizer))
    raise ValueError(f"unknown loss_normalization {normalization!r}: per_sequence or token_level")


def teacher_forward_kl(student_lp_NV, teacher_lp_NV):
    """KL(teacher || student) at each of N positions over the whole vocabulary: sum_v p_T(v) (log p_T(v) - log
    p_S(v)). Its gradient raises the tokens the teacher would write, whether or not the student sampled them (the
    sampled-token estimator of Eq. 2 can only lower or raise the token that was drawn)."""
    return (teacher_lp_NV.exp() * (teacher_lp_NV - student_lp_NV)).sum(-1)


def mopd_loss(train_logprobs_BS, inf_logprobs_BS, advantages_BS, mask_BS, *, low: float = 0.5, high: float = 2.0,
              normalization: str = "per_sequence", normalizer: int | None = None):
    ratio_BS = torch.exp(train_logprobs_BS.detach() - inf_logprobs_BS)
    in_band_BS = ((ratio_BS >= low) & (ratio_BS <= high)).float() * mask_BS
    w_BS = ratio_BS * in_band_BS
    per_token_BS = w_BS * advantages_BS.detach() * train_logprobs_BS * mask_BS
    loss = -masked_mean(per_token_BS, mask_BS, normalization, normalizer)
    n = mask_BS.sum().clamp(min=1)
    return loss, {"loss": loss.item(), "masked_frac": 1 - (in_band_BS.sum() / n).item(),
                  "ratio_mean": ((ratio_BS * mask_BS).sum() / n).item(),
                  "reverse_kl": (-(advantages_BS * mask_BS).sum() / n).item()}
