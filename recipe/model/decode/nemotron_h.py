"""A lean one-token decode step for NemotronH, for our generation loop (``recipe.train.rollout.generate``); Llama's
is :mod:`recipe.model.decode.llama`, and :mod:`recipe.model.decode` picks one per model.

Hugging Face's forward costs ~5 ms per decode step on the tiny model, almost all of it per-call overhead: mask
construction, cache objects, decorators and ~40 module calls for four layers. ``NemotronHDecodeState`` holds the
decode state in plain tensors and runs the same math layer by layer:

- Mamba-2: the recurrent step of :func:`recipe.model.fast_mamba.mamba_decode_step` (conv window + SSM state);
- attention (no positional encoding in NemotronH): a preallocated K/V buffer of ``prompt + max_new_tokens``
  columns and a key mask, GQA by viewing the query heads as ``[kv_heads, group]`` (HF's ``repeat_kv`` order);
- MoE: HF's own router; the routed experts are run densely (every expert on every row, weighted by the router's
  top-k weights, 0 elsewhere). With 8 small experts that is cheaper than grouping rows by expert, and a zero
  weight adds exactly nothing, so only float rounding of the matmuls differs from HF's grouped kernel.

The prompt is still prefilled by Hugging Face's forward; :meth:`NemotronHDecodeState.from_hf_cache` takes over its
cache.
Equality with HF's cached forward (logits per step, greedy tokens) is tested in tests/test_rollout.py.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from recipe.model.decode.row_state import DecodeRows
from recipe.model.fast_mamba import mamba_decode_step

_SUPPORTED = {"linear_attention", "full_attention", "moe", "mlp"}


def is_lean_nemotron_h(model) -> bool:
    cfg = getattr(model, "config", None)
    return (getattr(cfg, "model_type", None) == "nemotron_h"
            and set(getattr(cfg, "layers_block_type", [])) <= _SUPPORTED)


class NemotronHDecodeState(DecodeRows):
    """NemotronH's per-row decode state (:class:`recipe.model.decode.row_state.DecodeRows`); ``step`` feeds one token
    per row."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds = list(self.model.config.layers_block_type)

    @classmethod
    @torch.no_grad()
    def from_hf_cache(cls, model, cache, attention_mask_AP: torch.Tensor,
                      max_new_tokens: int) -> "NemotronHDecodeState":
        P = attention_mask_AP.shape[1]
        conv, ssm, keys, values = {}, {}, {}, {}
        for i, kind in enumerate(model.config.layers_block_type):
            if kind == "linear_attention":
                conv[i] = cache.get_conv_state(i, state_idx=0).detach().clone()
                ssm[i] = cache.get_recurrent_state(i, state_idx=0).detach().clone()
            elif kind == "full_attention":
                keys[i] = cls.kv_buffer(cache.layers[i].keys, max_new_tokens)      # [A, kv_heads, P + new, d]
                values[i] = cls.kv_buffer(cache.layers[i].values, max_new_tokens)
        return cls(model, conv, ssm, keys, values, cls.key_mask(attention_mask_AP, max_new_tokens), P)

    @torch.no_grad()
    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        """Logits [A, V] (float32) of the next token after ``tok_A``."""
        m = self.model.model
        t = self._open_column()
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
        self._advance()
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
