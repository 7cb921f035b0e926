"""A lean one-token decode step for NemotronH, for our generation loop (``recipe.train.rollout.generate``); Llama's
is ``recipe.model.fast_decode_llama``, and ``recipe.model.lean_decode`` picks one per model.

Hugging Face's forward costs ~5 ms per decode step on the tiny model, almost all of it per-call overhead: mask
construction, cache objects, decorators and ~40 module calls for four layers. ``DecodeState`` holds the decode
state in plain tensors and runs the same math layer by layer:

- Mamba-2: the recurrent step of :func:`recipe.model.fast_mamba.mamba_decode_step` (conv window + SSM state);
- attention (no positional encoding in NemotronH): a preallocated K/V buffer of ``prompt + max_new_tokens``
  columns and a key mask, GQA by viewing the query heads as ``[kv_heads, group]`` (HF's ``repeat_kv`` order);
- MoE: HF's own router; the routed experts are run densely (every expert on every row, weighted by the router's
  top-k weights, 0 elsewhere). With 8 small experts that is cheaper than grouping rows by expert, and a zero
  weight adds exactly nothing, so only float rounding of the matmuls differs from HF's grouped kernel.

The prompt is still prefilled by Hugging Face's forward; :meth:`DecodeState.from_hf_cache` takes over its cache.
Equality with HF's cached forward (logits per step, greedy tokens) is tested in tests/test_rollout.py.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from recipe.model.fast_mamba import mamba_decode_step

_SUPPORTED = {"linear_attention", "full_attention", "moe", "mlp"}


def is_lean_nemotron_h(model) -> bool:
    cfg = getattr(model, "config", None)
    return (getattr(cfg, "model_type", None) == "nemotron_h"
            and set(getattr(cfg, "layers_block_type", [])) <= _SUPPORTED)


def left_pad(t: torch.Tensor, shift: int, dim: int, width: int) -> torch.Tensor:
    """``t`` with ``shift`` zero columns prepended along ``dim``, cut to ``width`` columns."""
    pad = list(t.shape)
    pad[dim] = shift
    return torch.cat([t.new_zeros(pad), t], dim).narrow(dim, 0, width)


class DecodeState:
    """Per-row decode state of every layer after the prompt; ``step`` feeds one token per row."""

    def __init__(self, model, conv: dict, ssm: dict, keys: dict, values: dict, key_mask_AL: torch.Tensor, pos: int):
        self.model, self.conv, self.ssm, self.keys, self.values = model, conv, ssm, keys, values
        self.key_mask_AL, self.pos = key_mask_AL, pos
        self.kinds = list(model.config.layers_block_type)

    @classmethod
    @torch.no_grad()
    def from_hf_cache(cls, model, cache, attention_mask_AP: torch.Tensor, max_new_tokens: int) -> "DecodeState":
        A, P = attention_mask_AP.shape
        L = P + max_new_tokens
        conv, ssm, keys, values = {}, {}, {}, {}
        for i, kind in enumerate(model.config.layers_block_type):
            if kind == "linear_attention":
                conv[i] = cache.get_conv_state(i, state_idx=0).detach().clone()
                ssm[i] = cache.get_recurrent_state(i, state_idx=0).detach().clone()
            elif kind == "full_attention":
                k, v = cache.layers[i].keys, cache.layers[i].values           # [A, kv_heads, P, d]
                keys[i] = k.new_zeros(A, k.shape[1], L, k.shape[3])
                values[i] = v.new_zeros(A, v.shape[1], L, v.shape[3])
                keys[i][:, :, :P], values[i][:, :, :P] = k, v
        key_mask = torch.zeros(A, L, dtype=torch.bool, device=attention_mask_AP.device)
        key_mask[:, :P] = attention_mask_AP.bool()
        return cls(model, conv, ssm, keys, values, key_mask, P)

    @classmethod
    def concat(cls, states: list["DecodeState"]) -> "DecodeState":
        """Rows of several states (prefilled at different prompt widths) in one state: each state's keys are
        left-padded (masked) so that the next token lands in the same column for every row."""
        pos = max(s.pos for s in states)
        width = pos + min(s.key_mask_AL.shape[1] - s.pos for s in states)

        conv = {i: torch.cat([s.conv[i] for s in states]) for i in states[0].conv}
        ssm = {i: torch.cat([s.ssm[i] for s in states]) for i in states[0].ssm}
        keys = {i: torch.cat([left_pad(s.keys[i], pos - s.pos, 2, width) for s in states]) for i in states[0].keys}
        values = {i: torch.cat([left_pad(s.values[i], pos - s.pos, 2, width) for s in states]) for i in states[0].values}
        mask = torch.cat([left_pad(s.key_mask_AL, pos - s.pos, 1, width) for s in states])
        return cls(states[0].model, conv, ssm, keys, values, mask, pos)

    def select(self, rows: torch.Tensor) -> None:
        """Keep (or repeat) these rows, in this order."""
        for d in (self.conv, self.ssm, self.keys, self.values):
            for i in d:
                d[i] = d[i].index_select(0, rows)
        self.key_mask_AL = self.key_mask_AL.index_select(0, rows)

    @torch.no_grad()
    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        """Logits [A, V] (float32) of the next token after ``tok_A``."""
        m = self.model.model
        if self.pos >= self.key_mask_AL.shape[1]:
            raise RuntimeError("DecodeState: more steps than the max_new_tokens it was built for")
        t = self.pos
        self.key_mask_AL[:, t] = True
        h = m.embeddings(tok_A)
        for i, (layer, kind) in enumerate(zip(m.layers, self.kinds)):
            x = layer.norm(h.to(dtype=layer.norm.weight.dtype))
            if kind == "linear_attention":
                x = mamba_decode_step(layer.mixer, x, self.conv[i], self.ssm[i])
            elif kind == "full_attention":
                x = _attention_step(layer.mixer, x, self.keys[i], self.values[i], self.key_mask_AL[:, : t + 1], t)
            elif kind == "moe":
                x = _moe_dense(layer.mixer, x)
            else:
                x = layer.mixer(x)
            h = h + x
        self.pos += 1
        return self.model.lm_head(m.norm_f(h)).float()


def _attention_step(attn, x_AH, K, V, key_mask_AT, t: int):
    A = x_AH.shape[0]
    kvh, d = K.shape[1], K.shape[3]
    rep = attn.num_key_value_groups
    q = F.linear(x_AH, attn.q_proj.weight).view(A, kvh, rep, d)
    K[:, :, t] = F.linear(x_AH, attn.k_proj.weight).view(A, kvh, d)
    V[:, :, t] = F.linear(x_AH, attn.v_proj.weight).view(A, kvh, d)
    scores = (q @ K[:, :, : t + 1].transpose(-1, -2)) * attn.scaling            # [A, kvh, rep, T]
    scores = scores.masked_fill(~key_mask_AT[:, None, None, :], float("-inf"))
    out = torch.softmax(scores, -1, dtype=torch.float32).to(q.dtype) @ V[:, :, : t + 1]  # [A, kvh, rep, d]
    return attn.o_proj(out.reshape(A, kvh * rep * d))


def _moe_dense(moe, x_AH):
    _, w_AK, idx_AK = moe.gate(x_AH)
    ex = moe.experts
    z = moe.fc1_latent_proj(x_AH)
    hid = ex.act_fn(torch.matmul(z, ex.up_proj.transpose(1, 2)))                # [E, A, I]
    y = torch.matmul(hid, ex.down_proj.transpose(1, 2))                         # [E, A, D]
    W_EA = torch.zeros(ex.num_experts, x_AH.shape[0], dtype=w_AK.dtype, device=w_AK.device).scatter_(
        0, idx_AK.T.contiguous(), w_AK.T.contiguous())
    routed = (W_EA[..., None] * y).sum(0).to(x_AH.dtype)
    return moe.fc2_latent_proj(routed) + moe.shared_experts(x_AH)
