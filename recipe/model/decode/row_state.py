"""The per-row state a lean decode step keeps after the prompt, and the row bookkeeping every architecture shares:
joining states prefilled in separate length buckets (``concat``) and keeping, dropping or repeating rows
(``select``). The architectures' steps subclass it: NemotronH (:mod:`recipe.model.decode.nemotron_h`) and Llama
(:mod:`recipe.model.decode.llama`).

- ``keys`` / ``values``: per attention layer, a buffer of ``prompt + max_new_tokens`` columns, next to
  ``key_mask_AL`` (which columns hold a real key);
- ``conv`` / ``ssm``: per Mamba layer, the conv window and SSM state (no columns);
- ``pos``: the column the next token goes to (the same for every row); ``row_pos_A``: each row's own position of
  its next token. They differ after ``concat`` (a shorter bucket's keys are left-padded), and RoPE models rotate by
  ``row_pos_A`` so a row keeps the distances a plain padded forward gives it; NemotronH has no positional encoding.
"""
from __future__ import annotations

import torch


def _join_left_padded(parts: list[torch.Tensor], shifts: list[int], dim: int, width: int) -> torch.Tensor:
    """The rows of ``parts`` stacked into one tensor of ``width`` columns along ``dim``, each part's columns moved
    ``shift`` to the right (zeros before them, cut at ``width``). Allocated once and written in place: joining a
    128-row IFEval batch's K/V this way holds the joined buffer beside the parts, not also a padded copy of each."""
    shape = list(parts[0].shape)
    shape[0], shape[dim] = sum(p.shape[0] for p in parts), width
    out = parts[0].new_zeros(shape)
    r = 0
    for p, shift in zip(parts, shifts):
        n = min(p.shape[dim], width - shift)
        out[r:r + p.shape[0]].narrow(dim, shift, n).copy_(p.narrow(dim, 0, n))
        r += p.shape[0]
    return out


def compacting_order(done_A: torch.Tensor) -> torch.Tensor:
    """The rows to keep when the rows ``done_A`` have finished, as a ``select`` order that moves as few rows as
    possible: a live row among the first ``n`` (the number still live) stays in its slot, and each finished row's
    slot there takes a live row from beyond ``n``. A permutation of the live rows; the caller maps its own
    per-row bookkeeping through it (``active[keep]``)."""
    live = ~done_A
    n = int(live.sum())
    keep = torch.arange(n, device=done_A.device)
    holes = done_A[:n].nonzero().flatten()
    keep[holes] = live[n:].nonzero().flatten() + n
    return keep


class DecodeRows:
    """Per-row decode state of every layer after the prompt (see the module docstring); a subclass adds
    ``from_hf_cache`` and ``step``."""

    def __init__(self, model, conv: dict, ssm: dict, keys: dict, values: dict, key_mask_AL: torch.Tensor, pos: int,
                 row_pos_A: torch.Tensor | None = None):
        self.model, self.conv, self.ssm, self.keys, self.values = model, conv, ssm, keys, values
        self.key_mask_AL, self.pos = key_mask_AL, pos
        self.row_pos_A = (torch.full((key_mask_AL.shape[0],), pos, dtype=torch.long, device=key_mask_AL.device)
                          if row_pos_A is None else row_pos_A)

    @staticmethod
    def key_mask(attention_mask_AP: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
        """[A, prompt + max_new_tokens]: the prompt's attention mask, then columns for the new tokens (off)."""
        A, P = attention_mask_AP.shape
        mask = torch.zeros(A, P + max_new_tokens, dtype=torch.bool, device=attention_mask_AP.device)
        mask[:, :P] = attention_mask_AP.bool()
        return mask

    @staticmethod
    def kv_buffer(t_AHPd: torch.Tensor, max_new_tokens: int, dtype: torch.dtype | None = None) -> torch.Tensor:
        """A prompt's keys or values [A, heads, P, d] in a buffer with ``max_new_tokens`` more columns."""
        A, H, P, d = t_AHPd.shape
        buf = t_AHPd.new_zeros(A, H, P + max_new_tokens, d, dtype=dtype or t_AHPd.dtype)
        buf[:, :, :P] = t_AHPd
        return buf

    @classmethod
    def concat(cls, states: list["DecodeRows"], new_columns: int = 0):
        """Rows of several states (prefilled at different prompt widths) in one state: each state's keys are
        left-padded (masked) so that the next token lands in the same column for every row; each row keeps its own
        position. ``new_columns``: columns added for the tokens to come, so that states built with none (a
        prefill's buckets: ``from_hf_cache(..., 0)``) hold only their prompts until the one joined buffer exists
        (at 128 rows x 1,280 new tokens in fp32 a full-width buffer is ~9 GB; a buffer per bucket and then their
        join held two)."""
        pos = max(s.pos for s in states)
        width = pos + min(s.key_mask_AL.shape[1] - s.pos for s in states) + new_columns
        shifts = [pos - s.pos for s in states]
        conv = {i: torch.cat([s.conv[i] for s in states]) for i in states[0].conv}
        ssm = {i: torch.cat([s.ssm[i] for s in states]) for i in states[0].ssm}
        keys = {i: _join_left_padded([s.keys[i] for s in states], shifts, 2, width) for i in states[0].keys}
        values = {i: _join_left_padded([s.values[i] for s in states], shifts, 2, width) for i in states[0].values}
        mask = _join_left_padded([s.key_mask_AL for s in states], shifts, 1, width)
        return cls(states[0].model, conv, ssm, keys, values, mask, pos, torch.cat([s.row_pos_A for s in states]))

    def select(self, rows: torch.Tensor) -> None:
        """Keep (or repeat) these rows, in this order.

        Keeping at most as many rows as there are moves, in place, only the rows whose slot changes
        (``rows[j] != j``), and of the K/V buffers only the columns written so far (``[:pos]``; later columns are
        written before any step reads them), then narrows every tensor to the first ``len(rows)`` rows. A full
        ``index_select`` of a 128-row IFEval batch's K/V (~4 GB in bf16 at 1,500 columns) allocated and copied the
        whole buffer each time a row finished, ~2 s on two cores; with :func:`compacting_order` (holes filled
        from the tail) only the finished rows' slots are rewritten. Repeating rows (more rows out than in) copies."""
        n, A = len(rows), self.key_mask_AL.shape[0]
        if n > A:
            for d in (self.conv, self.ssm, self.keys, self.values):
                for i in d:
                    d[i] = d[i].index_select(0, rows)
            self.key_mask_AL = self.key_mask_AL.index_select(0, rows)
            self.row_pos_A = self.row_pos_A.index_select(0, rows)
            return
        moved = (rows != torch.arange(n, device=rows.device)).nonzero().flatten()
        src = rows[moved]
        if len(moved):
            for d in (self.conv, self.ssm):
                for i in d:
                    d[i][moved] = d[i][src]             # the right side is gathered (a copy) before it is written
            for d in (self.keys, self.values):
                for i in d:
                    d[i][moved, :, : self.pos] = d[i][src, :, : self.pos]
            self.key_mask_AL[moved] = self.key_mask_AL[src]
        for d in (self.conv, self.ssm, self.keys, self.values):
            for i in d:
                d[i] = d[i][:n]
        self.key_mask_AL = self.key_mask_AL[:n]
        self.row_pos_A = self.row_pos_A[rows]

    def _open_column(self) -> int:
        """Mark the next column as a real key for every row and return it (an error past the buffer's end)."""
        if self.pos >= self.key_mask_AL.shape[1]:
            raise RuntimeError(f"{type(self).__name__}: more steps than the max_new_tokens it was built for")
        self.key_mask_AL[:, self.pos] = True
        return self.pos

    def _advance(self) -> None:
        self.pos += 1
        self.row_pos_A = self.row_pos_A + 1
