"""Train the tiny profile's tokenizer offline: byte-level BPE with single-digit pre-tokenization.

Single digits keep arithmetic learnable for a tiny model (DESIGN.md §8). The chat template's markers are special
tokens so that ``<think>``/``</think>``/``<tool_call>`` are single ids. Deterministic for a given corpus.
"""
from __future__ import annotations

from typing import Iterable

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from recipe.model.chat_template import CHAT_TEMPLATE, SPECIAL_TOKENS


def train_tokenizer(corpus: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    # Units BPE may merge within: a markup tag (<name>, </think>, <function=), a word with its leading space, one
    # digit, a run of punctuation, or whitespace. Merges never cross word boundaries, so a word reads the same in
    # the prompt and in the answer - copying stays learnable for a tiny model.
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"</?[A-Za-z_]+[=>]?| ?[A-Za-z_]+| ?[0-9]|[^\sA-Za-z0-9_]+|\s+"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=2)
    tok.train_from_iterator(list(corpus), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=None, eos_token="<|im_end|>", pad_token="<pad>",
        additional_special_tokens=SPECIAL_TOKENS[1:], clean_up_tokenization_spaces=False)
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"  # generation pads on the left
    return fast
