"""The decode loop that asks the host about finished rows only every ``check_every`` tokens.

The eager loop of ``recipe.train.rollout.generate`` reads ``tok == eos`` back to the host after every token to drop
finished rows at once; on a GPU that read waits for the step to finish, so the next step cannot be queued while
this one runs. Here tokens, log-probs and the finished flags stay on the device: a row that emits ``<|im_end|>``
keeps running until the next check (its later tokens are written as padding and its log-probs as 0, so the output
is the eager loop's), and at a check the rows still generating are kept (``state.select``). The state is any
decode state with ``step`` and ``select`` (the eager ones, or :class:`recipe.model.decode.llama_static.
StaticLlamaDecode`); with ``check_every=1`` this is the eager loop's schedule.
"""
from __future__ import annotations

import torch

from recipe.model.decode.row_state import compacting_order


@torch.no_grad()
def decode_checked(state, logits_AV: torch.Tensor, sampler, *, max_new_tokens: int, eos: int, pad: int,
                   check_every: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(response tokens [B, R], their log-probs [B, R], finished [B]) on the CPU, for a state whose rows are the
    output rows in order; R is the last column any row generated (as the eager loop's steps run)."""
    dev = logits_AV.device
    B = logits_AV.shape[0]
    resp = torch.full((B, max_new_tokens), pad, dtype=torch.long, device=dev)
    inf_lp = torch.zeros(B, max_new_tokens, device=dev)
    rows = torch.arange(B, device=dev)           # state row -> output row
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    for t in range(max_new_tokens):
        tok_A, lp_A = sampler(logits_AV, rows)
        resp[rows, t] = torch.where(done, pad, tok_A)
        inf_lp[rows, t] = torch.where(done, 0.0, lp_A)
        done = done | (tok_A == eos)
        if t + 1 == max_new_tokens:
            break
        if (t + 1) % check_every == 0:
            keep = compacting_order(done)   # the host's one look at the rows
            if not len(keep):
                break
            if len(keep) < len(done):
                state.select(keep)
                rows, done, tok_A = rows[keep], done[keep], tok_A[keep]
        logits_AV = state.step(tok_A)
    resp, inf_lp = resp.cpu(), inf_lp.cpu()
    is_eos = resp == eos
    finished = is_eos.any(1)
    R = int(torch.where(finished, is_eos.float().argmax(1) + 1, max_new_tokens).max()) if B else 0
    return resp[:, :R], inf_lp[:, :R], finished
