"""Thinking mode as plain tokens on a pretrained ChatML model (``model.thinking: plain_tokens``).

A pretrained instruct model such as SmolLM2-135M-Instruct has its own ChatML template and no ``<think>`` token. The
recipe's thinking convention (RECIPE.md §2; ``recipe.model.chat_template``) is applied to it once, here, as text:

- the ChatML framing stays the model's own, including its default system prompt when a conversation has none
  (SmolLM2: "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
- thinking mode: the assistant turn opens ``<think>\\n``; instruct mode: an empty ``<think></think>``; reasoning of
  the last turn is kept as ``<think>\\nR\\n</think>\\nA``. ``<think>`` is *not* added to the vocabulary: it is the
  model's ordinary tokens for ``<``, ``think``, ``>``, so no embedding row is new and untrained;
- tool declarations and calls use the recipe template's text forms (``<tools>``, ``<tool_call>``), also as plain text.

:func:`adopt_plain_thinking` writes this as the tokenizer's Jinja ``chat_template``, so it is saved with every
checkpoint and used unchanged by the trainers (``recipe.model.chat_render.apply_template``: generation, SFT
targets), by the verifiers (which grade the text after ``</think>``, ``recipe.eval.thinking``), by the eval harness
and by a vLLM server of the checkpoint (its chat endpoint renders the same template with ``enable_thinking``).
"""
from __future__ import annotations

import json
import re

from recipe.model.chat_template import CHAT_TEMPLATE

MARKER = "{#- recipe:plain-thinking default_system="
_MARKER_RE = re.compile(r"^\{#- recipe:plain-thinking default_system=(.*?) -#\}\n", re.S)
_NS_INIT = "{%- set ns = namespace(last_user=-1, system='') -%}"
# The default system turn of a ChatML template ("<|im_start|>system\n...<|im_end|>" written as a literal)
_DEFAULT_SYSTEM_RE = re.compile(r"<\|im_start\|>system\n(.*?)<\|im_end\|>", re.S)


def default_system_of(template: str | None) -> str:
    """The system prompt a ChatML template inserts when a conversation has none ("" when it inserts none)."""
    if not template or "im_start" not in template:
        raise ValueError("model.thinking: plain_tokens needs a ChatML chat template (<|im_start|>role ... "
                         "<|im_end|>); this tokenizer has " + ("none" if not template else "another template"))
    m = _DEFAULT_SYSTEM_RE.search(template)
    return m.group(1) if m and "{" not in m.group(1) else ""


def plain_thinking_template(default_system: str) -> str:
    """The recipe's ChatML + thinking template with ``default_system`` as the system turn of a conversation that has
    none (tools are appended to it, as to a given system prompt)."""
    if _NS_INIT not in CHAT_TEMPLATE:
        raise RuntimeError("recipe.model.chat_template changed: the namespace line plain_thinking rewrites is gone")
    init = "{%- set ns = namespace(last_user=-1, system=" + json.dumps(default_system) + ") -%}"
    return f"{MARKER}{json.dumps(default_system)} -#}}\n" + CHAT_TEMPLATE.replace(_NS_INIT, init)


def plain_thinking_system(template: str | None) -> str | None:
    """The default system prompt when ``template`` is one written by :func:`plain_thinking_template`, else None."""
    if not template or not template.startswith(MARKER):
        return None
    m = _MARKER_RE.match(template)
    if m is None:
        return None
    system = json.loads(m.group(1))
    return system if template == plain_thinking_template(system) else None


def adopt_plain_thinking(tokenizer) -> None:
    """Give a pretrained ChatML tokenizer the plain-token thinking convention (in place; idempotent)."""
    if plain_thinking_system(tokenizer.chat_template) is not None:
        return
    system = default_system_of(tokenizer.chat_template)
    vocab = tokenizer.get_vocab()
    special = set(tokenizer.all_special_tokens)
    for marker in ("<think>", "</think>"):
        if marker in vocab and marker in special:
            raise ValueError(f"{marker} is a special token of this tokenizer: use model.thinking: template")
    if tokenizer.eos_token != "<|im_end|>":
        raise ValueError(f"plain_tokens thinking ends a turn with <|im_end|>; this tokenizer's eos is "
                         f"{tokenizer.eos_token!r}")
    tokenizer.chat_template = plain_thinking_template(system)
