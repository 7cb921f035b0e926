"""Lean decode steps for our generation loop (``recipe.train.rollout.generate``), one module per architecture,
and the picker:

- :mod:`recipe.model.decode.row_state`: ``DecodeRows``, the row bookkeeping every architecture shares (K/V buffers, key
  mask, per-row positions, joining length buckets, keeping or dropping rows);
- :mod:`recipe.model.decode.nemotron_h`: ``NemotronHDecodeState`` (Mamba-2 step, attention, dense MoE);
- :mod:`recipe.model.decode.llama`: ``LlamaDecodeState`` (RoPE at each row's position, GQA);
- :func:`lean_decode_state` picks one for a model, or none (then Hugging Face's cached forward).
"""
from __future__ import annotations

from recipe.model.decode.llama import LlamaDecodeState, is_lean_llama
from recipe.model.decode.nemotron_h import NemotronHDecodeState, is_lean_nemotron_h


def lean_decode_state(model):
    """The lean decode-state class for this model's architecture, or None (then Hugging Face's cached forward)."""
    if is_lean_nemotron_h(model):
        return NemotronHDecodeState
    if is_lean_llama(model):
        return LlamaDecodeState
    return None


def supports_lean_decode(model) -> bool:
    return lean_decode_state(model) is not None
