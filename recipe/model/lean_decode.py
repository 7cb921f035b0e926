"""Which lean decode step a model gets (``recipe.train.rollout.generate``): NemotronH's
(:mod:`recipe.model.fast_decode`), Llama's (:mod:`recipe.model.fast_decode_llama`), or none, and then Hugging Face's
cached forward."""
from __future__ import annotations

from recipe.model.fast_decode import DecodeState, is_lean_nemotron_h
from recipe.model.fast_decode_llama import LlamaDecodeState, is_lean_llama


def lean_decode_state(model):
    """The lean decode-state class for this model's architecture, or None (then Hugging Face's cached forward)."""
    if is_lean_nemotron_h(model):
        return DecodeState
    if is_lean_llama(model):
        return LlamaDecodeState
    return None


def supports_lean_decode(model) -> bool:
    return lean_decode_state(model) is not None
