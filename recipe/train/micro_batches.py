"""Micro-batches: a training step's rows run a few at a time, so that memory grows with the micro-batch, not the batch.

NeMo-RL splits a step's batch the same way (``policy.train_micro_batch_size`` rows a forward/backward, gradients
accumulated until the one optimizer step; ``policy.logprob_batch_size`` rows a no-grad log-prob pass). Here they are
``run.train_micro_batch_size`` and ``run.logprob_batch_size`` (null: the whole batch in one pass).

Every loss of ``recipe.train.losses`` is a sum over rows divided by a count of the whole batch (tokens, or for MOPD's
per-sequence normalisation sequences with a trained token). Each micro-batch's loss is divided by that whole-batch
count (``normalizer``), so the micro-batches' losses, and the gradients their backward passes accumulate, add up to
those of one pass over the batch (float rounding aside; tests/test_micro_batches.py).

Rows are cut in contiguous runs of the batch's order: a GRPO step's rows come group by group, so a micro-batch of a
multiple of the group size keeps each group's shared prompt in one forward (``rollout._hidden_states``).
"""
from __future__ import annotations

from typing import Callable

import torch

# metrics that are a micro-batch's share of the batch's value (already divided by the whole batch's count): summed;
# the others are means over a micro-batch's trained tokens: averaged with those tokens as weights
ADDITIVE_METRICS = frozenset({"loss", "pg_loss", "kl"})
SUM_PREFIX = "sum/"   # counts and sums over a micro-batch's rows (recipe.train.rl_rules.opd_domain_sums): summed


def row_chunks(n_rows: int, size: int | None) -> list[torch.Tensor]:
    """Contiguous row indices of at most ``size`` rows each (``None``: one chunk of every row)."""
    if size is None or size >= n_rows:
        return [torch.arange(n_rows)]
    return [torch.arange(lo, min(lo + size, n_rows)) for lo in range(0, n_rows, size)]


def trim_columns(cols: list[torch.Tensor], attn_BS: torch.Tensor) -> list[torch.Tensor]:
    """Drop columns that are padding in every row (left of the longest prompt, right of the longest answer)."""
    used = attn_BS.bool().any(0).nonzero().flatten()
    lo, hi = int(used[0]), int(used[-1]) + 1
    return [t[:, lo:hi] for t in cols]


def loss_normalizer(mask_BS: torch.Tensor, per_sequence: bool) -> int:
    """The whole batch's count a loss divides by: trained tokens, or (``per_sequence``) rows with a trained token."""
    return int((mask_BS.sum(1) > 0).sum()) if per_sequence else int(mask_BS.sum())


def accumulate_gradients(loss_of_rows: Callable[[torch.Tensor], tuple[torch.Tensor, dict]], mask_BS: torch.Tensor,
                         size: int | None) -> dict:
    """Run ``loss_of_rows(rows)`` (a loss divided by the whole batch's count) and its backward on each micro-batch of
    ``size`` rows; the gradients add up in the parameters' ``.grad``. Returns the batch's metrics: the additive ones
    summed, the others weighted by each micro-batch's trained tokens."""
    chunks = row_chunks(mask_BS.shape[0], size)
    sums: dict[str, float] = {}
    weights: dict[str, float] = {}
    for rows in chunks:
        loss, metrics = loss_of_rows(rows)
        loss.backward()
        w = float(mask_BS[rows].sum())
        for k, v in metrics.items():
            if k in ADDITIVE_METRICS or k.startswith(SUM_PREFIX):
                sums[k] = sums.get(k, 0.0) + float(v)
            else:
                sums[k] = sums.get(k, 0.0) + float(v) * w
                weights[k] = weights.get(k, 0.0) + w
    out = {k: v / weights[k] if weights.get(k) else v for k, v in sums.items()}   # additive keys have no weight
    out["micro_batches"] = len(chunks)
    return out


@torch.no_grad()
def logprobs_in_passes(model, ids_BS, attn_BS, mask_BS, temperature: float, size: int | None, *,
                       on_device: bool = False) -> torch.Tensor:
    """``sequence_logprobs`` of a no-grad pass (a reference or teacher model), ``size`` rows at a time, each pass
    trimmed to its own columns; the same values as one pass."""
    from recipe.train.rollout import sequence_logprobs
    chunks = row_chunks(ids_BS.shape[0], size)
    if len(chunks) == 1:
        return sequence_logprobs(model, ids_BS, attn_BS, mask_BS, temperature, on_device=on_device)
    parts = []
    used = attn_BS.bool()
    for rows in chunks:
        cols = used[rows].any(0).nonzero().flatten()
        lo, hi = int(cols[0]), int(cols[-1]) + 1
        lp = sequence_logprobs(model, ids_BS[rows, lo:hi], attn_BS[rows, lo:hi], mask_BS[rows, lo:hi], temperature,
                               on_device=on_device)
        parts.append((rows, lo, hi, lp))
    out = torch.zeros(ids_BS.shape, dtype=torch.float32, device=parts[0][3].device)
    for rows, lo, hi, lp in parts:
        out[rows.to(out.device), lo:hi] = lp
    return out
