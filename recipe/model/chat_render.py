"""The chat template of ``recipe.model.chat_template`` rendered in plain Python, and the one entry point the trainers
use to render a conversation with a tokenizer.

Why: Hugging Face renders ``tokenizer.apply_chat_template`` through a sandboxed Jinja environment at ~0.4 ms a
conversation; the tiny run renders tens of thousands (the tokenizer corpus, SFT examples, the generation-cap check,
every RL prompt), which cost ~15 s of ``make run``. :func:`render_chat_py` returns the same string as the Jinja
template (``tests/test_chat_render.py`` compares both on every tiny record and on hand-built edge cases), and
:func:`apply_template` uses it only when the tokenizer carries exactly our template and the conversation is plain
(string contents, dict messages, tools and tool calls); anything else goes through the tokenizer's own template.
"""
from __future__ import annotations

import json
from collections.abc import Mapping

from recipe.model.chat_template import CHAT_TEMPLATE
from recipe.model.plain_thinking import plain_thinking_system

_END = "<|im_end|>\n"


class _NotPlain(Exception):
    """The conversation uses something the Python renderer does not cover: render with Jinja instead."""


def _mapping(obj) -> Mapping:
    if not isinstance(obj, Mapping):
        raise _NotPlain(type(obj).__name__)
    return obj


def _get(obj, key: str, default=None):
    """Jinja's ``obj.key`` on the dicts of a conversation (``default`` when undefined)."""
    return _mapping(obj).get(key, default)


def _text(value) -> str:
    """``{{ value }}`` / ``~`` for the values our records hold (strings, numbers, None)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    raise _NotPlain(type(value).__name__)


def _tools_block(system: str, tools: list) -> str:
    out = [system, "\n\n" if system else "", "<tools>"]
    for t in tools:
        f = _get(t, "function") if "function" in _mapping(t) else t
        out += ["<function><name>", _text(_get(f, "name", "")), "</name><description>",
                _text(_get(f, "description") or ""), "</description><parameters>"]
        params = _get(f, "parameters")
        if isinstance(params, Mapping) and "properties" in params:
            for pname, p in _mapping(params["properties"]).items():
                out += ["<parameter><name>", _text(pname), "</name><type>", _text(_get(p, "type") or "string"),
                        "</type><description>", _text(_get(p, "description") or ""), "</description></parameter>"]
        elif params is not None and not isinstance(params, Mapping):
            raise _NotPlain("parameters")
        out.append("</parameters></function>")
    out.append("</tools>")
    return "".join(out)


def _tool_call(tc) -> str:
    f = _get(tc, "function") if "function" in _mapping(tc) else tc
    out = ["<tool_call><function=", _text(_get(f, "name", "")), ">"]
    args = _get(f, "arguments", {})
    if isinstance(args, Mapping):
        for k, v in args.items():
            # HF's tojson filter: json.dumps(ensure_ascii=False)
            out += ["<parameter=", _text(k), ">", v if isinstance(v, str) else json.dumps(v, ensure_ascii=False),
                    "</parameter>"]
    else:
        out.append(_text(args))
    out.append("</function></tool_call>")
    return "".join(out)


def render_chat_py(messages: list[dict], tools: list | None = None, *, enable_thinking: bool = True,
                   add_generation_prompt: bool = False, default_system: str = "") -> str:
    """Our chat template in Python (the same string as the Jinja one); raises :class:`_NotPlain` for input it does
    not cover. ``default_system``: the system turn when there is none (``recipe.model.plain_thinking``)."""
    last_user = -1
    for i, m in enumerate(messages):
        if _get(m, "role") in ("user", "tool"):
            last_user = i
    system = default_system
    if messages and _get(messages[0], "role") == "system":
        system = messages[0].get("content")
        if not isinstance(system, str):
            raise _NotPlain("system content")
    if tools:
        system = _tools_block(system, tools)
    out = [f"<|im_start|>system\n{system}{_END}"] if system else []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "user":
            out += ["<|im_start|>user\n", _text(m["content"]) if "content" in m else "", _END]
        elif role == "tool":
            out += ["<|im_start|>user\n<tool_response>", _text(m["content"]) if "content" in m else "",
                    "</tool_response>", _END]
        elif role == "assistant":
            content = m.get("content") or ""
            if not isinstance(content, str):
                raise _NotPlain("assistant content")
            if m.get("reasoning_content") is not None:
                reasoning = m["reasoning_content"]
            elif "</think>" in content:
                reasoning = content.split("</think>")[0].replace("<think>", "").strip()
            else:
                reasoning = None
            if "</think>" in content:
                content = content.split("</think>")[-1].lstrip()
            out.append("<|im_start|>assistant\n")
            if i > last_user and reasoning is not None and reasoning != "":
                out += ["<think>\n", _text(reasoning), "\n</think>\n", content]
            else:
                out += ["<think></think>", content]
            calls = m.get("tool_calls") or ()
            if not isinstance(calls, (list, tuple)):
                raise _NotPlain("tool_calls")
            out += [_tool_call(tc) for tc in calls]
            out.append(_END)
        elif role != "system":
            raise _NotPlain(f"role {role!r}")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n" + ("<think></think>" if enable_thinking is False else "<think>\n"))
    return "".join(out)


def render_chat(messages: list[dict], tools: list | None = None, *, enable_thinking: bool = True,
                add_generation_prompt: bool = False) -> str:
    """Render with the template but without a tokenizer (the tiny tokenizer is trained on these strings): in Python
    (``render_chat_py``, the same string), or with Jinja for what the Python renderer does not cover."""
    try:
        return render_chat_py(messages, tools, enable_thinking=enable_thinking, add_generation_prompt=add_generation_prompt)
    except _NotPlain:
        pass
    from transformers.utils.chat_template_utils import render_jinja_template
    out, _ = render_jinja_template(conversations=[messages], chat_template=CHAT_TEMPLATE, tools=tools,
                                   enable_thinking=enable_thinking, add_generation_prompt=add_generation_prompt)
    return out[0]


def apply_template(tokenizer, messages: list[dict], *, tools: list | None = None, enable_thinking: bool = True,
                   add_generation_prompt: bool = False) -> str:
    """``tokenizer.apply_chat_template(..., tokenize=False)``, in Python when the tokenizer's template is ours (the
    tiny template, or its plain-token thinking form on a pretrained ChatML model)."""
    template = getattr(tokenizer, "chat_template", None)
    default_system = "" if template == CHAT_TEMPLATE else plain_thinking_system(template)
    if default_system is not None:
        try:
            return render_chat_py(messages, tools, enable_thinking=enable_thinking,
                                  add_generation_prompt=add_generation_prompt, default_system=default_system)
        except _NotPlain:
            pass
    return tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                         tokenize=False, enable_thinking=enable_thinking)
