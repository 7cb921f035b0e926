"""Sampling a token per row from decode logits, on the logits' own device.

- :func:`top_p_filter`: nucleus filtering as Hugging Face's ``TopPLogitsWarper`` does it;
- :func:`sample_inverse_cdf`: one token per row from one uniform per row;
- :class:`DeviceSampler`: temperature, top-p and the draw in one call, with the uniforms drawn by a generator on the
  logits' device (seeded once from the CPU generator, so a seeded run repeats itself), so a decode step needs no
  host round trip. It draws one uniform for every row of the batch each step and picks the active rows' numbers, so
  a row's randomness does not depend on which other rows are still generating (as the eager loop of
  ``recipe.train.rollout.generate``, whose uniforms come from the CPU generator). Same distribution, other numbers.
"""
from __future__ import annotations

import torch


def top_p_filter(logits_BV: torch.Tensor, top_p: float) -> torch.Tensor:
    """Nucleus filtering as Hugging Face's ``TopPLogitsWarper`` does it: drop the lowest-probability tokens whose
    cumulative probability stays <= 1 - top_p (the most likely token is always kept)."""
    if top_p >= 1.0:
        return logits_BV
    sorted_logits, sorted_idx = torch.sort(logits_BV, descending=False)
    drop_sorted = sorted_logits.softmax(-1).cumsum(-1) <= (1 - top_p)
    drop_sorted[..., -1:] = False
    return logits_BV.masked_fill(drop_sorted.scatter(1, sorted_idx, drop_sorted), float("-inf"))


def sample_inverse_cdf(probs_BV: torch.Tensor, u_B: torch.Tensor) -> torch.Tensor:
    """One token per row by inverse-CDF sampling with the uniforms ``u_B``: the distribution of
    ``torch.multinomial(probs, 1)`` at one random number per row (multinomial draws one per vocabulary entry)."""
    cdf = probs_BV.float().cumsum(-1)
    return torch.searchsorted(cdf, (u_B[:, None] * cdf[:, -1:]).contiguous(), right=True).clamp_(
        max=probs_BV.shape[-1] - 1).squeeze(-1)


class DeviceSampler:
    """Tokens and their log-probs under the tempered distribution (pi_inf, unfiltered, as the losses expect) for
    ``B`` output rows, on ``device``; ``greedy`` takes the argmax (log-prob 0, as the eager loop leaves it)."""

    def __init__(self, B: int, device: torch.device, *, temperature: float, top_p: float, greedy: bool):
        self.B, self.temperature, self.top_p, self.greedy = B, temperature, top_p, greedy
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(int(torch.randint(0, 2**62, (1,))))   # from the CPU generator: seeded runs repeat

    def __call__(self, logits_AV: torch.Tensor, rows_A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens [A], log-probs [A]) for the state rows holding output rows ``rows_A``."""
        if self.greedy:
            return logits_AV.argmax(-1), torch.zeros(len(rows_A), device=logits_AV.device)
        scaled = logits_AV / self.temperature
        u_A = torch.rand(self.B, generator=self.gen, device=logits_AV.device)[rows_A]
        tok_A = sample_inverse_cdf(torch.softmax(top_p_filter(scaled, self.top_p), -1), u_A)
        return tok_A, torch.log_softmax(scaled, -1).gather(-1, tok_A[:, None]).squeeze(-1)
