"""The Python renderer of our chat template (recipe/model/chat_render.py) against the Jinja template it replaces
on the hot paths: every tiny record and hand-built edge cases give the same string, and anything it does not cover
goes through the tokenizer's own template."""
from __future__ import annotations

import pytest
from transformers.utils.chat_template_utils import render_jinja_template

from recipe.config import load_config
from recipe.domains import build_tiny_splits, to_sft_messages
from recipe.model.chat_render import _NotPlain, apply_template, render_chat_py
from recipe.model.chat_template import CHAT_TEMPLATE


def jinja(messages, tools=None, *, enable_thinking=True, add_generation_prompt=False, template=CHAT_TEMPLATE):
    out, _ = render_jinja_template(conversations=[messages], chat_template=template, tools=tools,
                                   enable_thinking=enable_thinking, add_generation_prompt=add_generation_prompt)
    return out[0]


@pytest.fixture(scope="module")
def splits():
    cfg = load_config("tiny")
    return cfg, build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)


def test_every_tiny_record_renders_as_the_jinja_template(splits):
    cfg, sp = splits
    n = 0
    for d in cfg.domains.names:
        for split, recs in sp[d].items():
            for r in recs[:40]:
                for thinking in (True, False):
                    convs = [(r["messages"], True), (r["messages"], False)]
                    if "reference" in r.get("metadata", {}):
                        convs.append((to_sft_messages(r, thinking), False))
                    for conv, gen in convs:
                        kw = dict(enable_thinking=thinking, add_generation_prompt=gen)
                        assert render_chat_py(conv, r.get("tools"), **kw) == jinja(conv, r.get("tools"), **kw), \
                            (d, split, r["id"], kw)
                        n += 1
    assert n > 1000


EDGE_CASES = [
    # multi-turn: history assistant turns lose their reasoning; the turn after the last user keeps it
    ([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
      {"role": "assistant", "content": "<think>\nplan\n</think>\n  hello", "reasoning_content": None},
      {"role": "user", "content": "again"},
      {"role": "assistant", "content": "done", "reasoning_content": "think more"}], None),
    # reasoning inside content, empty reasoning, None content, tool results as a tool role
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "<think></think>ans"},
      {"role": "tool", "content": "42"}, {"role": "assistant", "content": None, "reasoning_content": ""}], None),
    # tool calls: dict arguments of every JSON type (non-ASCII kept), string arguments, no arguments
    ([{"role": "user", "content": "weather?"},
      {"role": "assistant", "content": "calling", "tool_calls": [
          {"type": "function", "function": {"name": "get", "arguments": {
              "city": "Zürich", "days": 3, "ok": True, "tags": ["a", "b"], "opt": None, "nested": {"x": 1.5}}}},
          {"function": {"name": "raw", "arguments": '{"a": 1}'}},
          {"name": "bare"}]}],
     [{"type": "function", "function": {"name": "get", "description": "Weather", "parameters": {
         "type": "object", "properties": {"city": {"type": "string", "description": "a city"},
                                          "days": {"type": "integer"}, "any": {}}}}},
      {"name": "raw", "description": None},
      {"type": "function", "function": {"name": "noparams", "parameters": {"type": "object"}}}]),
    # tools without a system prompt; a user content that is None renders "None" as Jinja does
    ([{"role": "user", "content": None}, {"role": "user"}], [{"function": {"name": "f"}}]),
    ([], None),
]


@pytest.mark.parametrize("case", range(len(EDGE_CASES)))
@pytest.mark.parametrize("thinking", [True, False])
@pytest.mark.parametrize("gen", [True, False])
def test_edge_cases_render_as_the_jinja_template(case, thinking, gen):
    messages, tools = EDGE_CASES[case]
    kw = dict(enable_thinking=thinking, add_generation_prompt=gen)
    assert render_chat_py(messages, tools, **kw) == jinja(messages, tools, **kw)


class _Tok:
    """The part of a tokenizer apply_template uses: its template and Hugging Face's renderer."""

    def __init__(self, template):
        self.chat_template, self.calls = template, 0

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=False, tokenize=False,
                            enable_thinking=True):
        self.calls += 1
        return jinja(messages, tools, enable_thinking=enable_thinking, add_generation_prompt=add_generation_prompt,
                     template=self.chat_template)


def test_apply_template_uses_python_only_for_our_template_and_plain_conversations():
    plain = [{"role": "user", "content": "hi"}]
    ours = _Tok(CHAT_TEMPLATE)
    assert apply_template(ours, plain, add_generation_prompt=True) == jinja(plain, add_generation_prompt=True)
    assert ours.calls == 0
    # list content (multimodal style) is not covered: the tokenizer's template renders it
    parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    with pytest.raises(_NotPlain):
        render_chat_py(parts)
    assert apply_template(ours, parts) == jinja(parts)
    assert ours.calls == 1
    # another model's template is always rendered by the tokenizer
    other = _Tok("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}")
    assert apply_template(other, plain) == "[user] hi\n"
    assert other.calls == 1
