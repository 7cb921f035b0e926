"""The tiny Llama (2 layers, hidden 32, grouped-query heads, tied embeddings) and its arithmetic-chat tokenizer that
the Llama-path tests build: one definition, each test file choosing its device and config extras."""
from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from recipe.model.tokenizer import train_tokenizer

CORPUS = [f"<|im_start|>user\nAdd {a} and {b}.<|im_end|>\n<|im_start|>assistant\n<think>\n{a} plus {b}\n</think>\n"
          f"{a + b}<|im_end|>\n" for a in range(12) for b in range(12)]


def tiny_llama(device: str = "cpu", max_position_embeddings: int = 256, **config):
    """(model in eval mode on ``device``, tokenizer), seeded: the same weights every call."""
    torch.manual_seed(0)
    tok = train_tokenizer(CORPUS, 300)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_position_embeddings,
                      tie_word_embeddings=True, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                      bos_token_id=None, **config)
    return LlamaForCausalLM(cfg).eval().to(device), tok
