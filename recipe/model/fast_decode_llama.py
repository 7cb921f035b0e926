"""A lean one-token decode step for Llama-architecture models (SmolLM2, the small profile's model), for our
generation loop (``recipe.train.rollout.generate``).

Hugging Face's cached forward grows its key/value cache by concatenation every step (each step copies the whole
cache), builds a 4D attention mask and a cache object per call, and runs ~10 module calls a layer. ``LlamaDecodeState``
runs the same math on plain tensors:

- keys and values go into a preallocated buffer of ``prompt + max_new_tokens`` columns, beside a key mask; on CUDA
  the buffer holds the autocast dtype (bf16), the precision Hugging Face's SDPA casts the cache to anyway;
- RoPE uses the model's own ``rotary_emb`` at a per-row position: prompts prefilled in length buckets
  (``recipe.train.rollout.prefill_in_buckets``) are joined with left-padded keys, so a row's next position is its
  own bucket's width, not the joined column (RoPE scores depend on relative positions only, so rows keep exactly the
  distances a plain padded forward gives them);
- GQA by viewing the query heads as ``[kv_heads, group]`` (Hugging Face's ``repeat_kv`` order), no copy of K/V.

Equality with Hugging Face's cached forward (logits per step, greedy tokens, bucketed prefill) is tested in
tests/test_llama_path.py.
"""
from __future__ import annotations

import torch

from recipe.model.fast_decode import left_pad


def is_lean_llama(model) -> bool:
    cfg = getattr(model, "config", None)
    return getattr(cfg, "model_type", None) == "llama" and hasattr(getattr(model, "model", None), "rotary_emb")


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaDecodeState:
    """Per-row decode state of every layer after the prompt; ``step`` feeds one token per row."""

    def __init__(self, model, keys: list, values: list, key_mask_AL: torch.Tensor, pos: int,
                 rope_pos_A: torch.Tensor):
        self.model, self.keys, self.values, self.key_mask_AL, self.pos = model, keys, values, key_mask_AL, pos
        self.rope_pos_A = rope_pos_A          # RoPE position of each row's next token

    @classmethod
    @torch.no_grad()
    def from_hf_cache(cls, model, cache, attention_mask_AP: torch.Tensor, max_new_tokens: int) -> "LlamaDecodeState":
        A, P = attention_mask_AP.shape
        L = P + max_new_tokens
        dev = attention_mask_AP.device
        dtype = torch.get_autocast_dtype(dev.type) if torch.is_autocast_enabled(dev.type) else None
        keys, values = [], []
        for layer in cache.layers:
            k, v = layer.keys, layer.values                                  # [A, kv_heads, P, d]
            kb = k.new_zeros(A, k.shape[1], L, k.shape[3], dtype=dtype or k.dtype)
            vb = v.new_zeros(A, v.shape[1], L, v.shape[3], dtype=dtype or v.dtype)
            kb[:, :, :P], vb[:, :, :P] = k, v
            keys.append(kb)
            values.append(vb)
        key_mask = torch.zeros(A, L, dtype=torch.bool, device=dev)
        key_mask[:, :P] = attention_mask_AP.bool()
        return cls(model, keys, values, key_mask, P, torch.full((A,), P, dtype=torch.long, device=dev))

    @classmethod
    def concat(cls, states: list["LlamaDecodeState"]) -> "LlamaDecodeState":
        """Rows of several states (prefilled at different prompt widths) in one state: each state's keys are
        left-padded (masked) so that the next token lands in the same column for every row; each row keeps its
        own RoPE position."""
        pos = max(s.pos for s in states)
        width = pos + min(s.key_mask_AL.shape[1] - s.pos for s in states)
        n = len(states[0].keys)
        keys = [torch.cat([left_pad(s.keys[i], pos - s.pos, 2, width) for s in states]) for i in range(n)]
        values = [torch.cat([left_pad(s.values[i], pos - s.pos, 2, width) for s in states]) for i in range(n)]
        mask = torch.cat([left_pad(s.key_mask_AL, pos - s.pos, 1, width) for s in states])
        return cls(states[0].model, keys, values, mask, pos, torch.cat([s.rope_pos_A for s in states]))

    def select(self, rows: torch.Tensor) -> None:
        """Keep (or repeat) these rows, in this order."""
        self.keys = [k.index_select(0, rows) for k in self.keys]
        self.values = [v.index_select(0, rows) for v in self.values]
        self.key_mask_AL = self.key_mask_AL.index_select(0, rows)
        self.rope_pos_A = self.rope_pos_A.index_select(0, rows)

    @torch.no_grad()
    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        """Logits [A, V] (float32) of the next token after ``tok_A``."""
        m = self.model.model
        if self.pos >= self.key_mask_AL.shape[1]:
            raise RuntimeError("LlamaDecodeState: more steps than the max_new_tokens it was built for")
        t = self.pos
        self.key_mask_AL[:, t] = True
        h = m.embed_tokens(tok_A)
        cos, sin = m.rotary_emb(h, self.rope_pos_A[:, None])                     # [A, 1, d]
        mask = self.key_mask_AL[:, None, None, : t + 1]
        for layer, K, V in zip(m.layers, self.keys, self.values):
            h = h + _attention_step(layer.self_attn, layer.input_layernorm(h), cos, sin, K, V, mask, t)
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        self.pos += 1
        self.rope_pos_A = self.rope_pos_A + 1
        return self.model.lm_head(m.norm(h)).float()


def _attention_step(attn, x_AH, cos_A1d, sin_A1d, K, V, mask_A11T, t: int):
    A = x_AH.shape[0]
    kvh, d = K.shape[1], K.shape[3]
    rep = attn.num_key_value_groups
    q = attn.q_proj(x_AH).view(A, kvh * rep, d)
    k = attn.k_proj(x_AH).view(A, kvh, d)
    q = q * cos_A1d + _rotate_half(q) * sin_A1d
    K[:, :, t] = k * cos_A1d + _rotate_half(k) * sin_A1d
    V[:, :, t] = attn.v_proj(x_AH).view(A, kvh, d)
    q = q.view(A, kvh, rep, d).to(K.dtype)
    scores = (q @ K[:, :, : t + 1].transpose(-1, -2)) * attn.scaling            # [A, kvh, rep, T]
    scores = scores.masked_fill(~mask_A11T, float("-inf"))
    out = torch.softmax(scores, -1, dtype=torch.float32).to(V.dtype) @ V[:, :, : t + 1]  # [A, kvh, rep, d]
    return attn.o_proj(out.reshape(A, kvh * rep * d))
