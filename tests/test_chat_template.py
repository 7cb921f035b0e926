"""The Nemotron chat template renders the strings RECIPE.md §2 describes, through a trained tiny tokenizer that
saves and loads as a normal Hugging Face folder."""
from __future__ import annotations

import json

import pytest
from transformers import AutoTokenizer

from recipe.model.tokenizer import train_tokenizer

CORPUS = ["<|im_start|>user\nhello world 123<|im_end|>\n<|im_start|>assistant\n<think>\nok\n</think>\nhi<|im_end|>"] * 20


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    t = train_tokenizer(CORPUS, 300)
    d = tmp_path_factory.mktemp("tok")
    t.save_pretrained(d)
    return AutoTokenizer.from_pretrained(d)  # the saved folder carries the template


def render(tok, messages, **kw):
    return tok.apply_chat_template(messages, tokenize=False, **kw)


def test_thinking_generation_prompt(tok):
    s = render(tok, [{"role": "user", "content": "Q"}], add_generation_prompt=True)
    assert s == "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert render(tok, [{"role": "user", "content": "Q"}], add_generation_prompt=True, enable_thinking=True) == s


def test_instruct_generation_prompt(tok):
    s = render(tok, [{"role": "user", "content": "Q"}], add_generation_prompt=True, enable_thinking=False)
    assert s == "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think></think>"


def test_system_prompt_and_final_turn_keeps_reasoning(tok):
    msgs = [{"role": "system", "content": "You are a helpful and harmless assistant."},
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": "A", "reasoning_content": "R"}]
    assert render(tok, msgs) == ("<|im_start|>system\nYou are a helpful and harmless assistant.<|im_end|>\n"
                                 "<|im_start|>user\nQ<|im_end|>\n"
                                 "<|im_start|>assistant\n<think>\nR\n</think>\nA<|im_end|>\n")


def test_earlier_turns_lose_their_reasoning(tok):
    msgs = [{"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "<think>\nsecret steps\n</think>\nA1"},
            {"role": "user", "content": "Q2"}]
    s = render(tok, msgs, add_generation_prompt=True)
    assert "secret steps" not in s
    assert s == ("<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\n<think></think>A1<|im_end|>\n"
                 "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think>\n")
    msgs[1] = {"role": "assistant", "content": "A1", "reasoning_content": "secret steps"}
    assert "secret steps" not in render(tok, msgs, add_generation_prompt=True)


def test_tools_in_system_prompt_and_xml_tool_calls(tok):
    tools = [{"type": "function", "function": {"name": "get_time", "description": "time", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "description": "where"}}}}}]
    msgs = [{"role": "user", "content": "time in oslo?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "get_time", "arguments": {"city": "oslo", "n": 2}}}]},
            {"role": "tool", "content": "12:00"}]
    s = render(tok, msgs, tools=tools, add_generation_prompt=True)
    assert s.startswith("<|im_start|>system\n<tools><function><name>get_time</name><description>time</description>"
                        "<parameters><parameter><name>city</name><type>string</type><description>where"
                        "</description></parameter></parameters></function></tools><|im_end|>\n")
    assert ("<|im_start|>assistant\n<think></think><tool_call><function=get_time><parameter=city>oslo</parameter>"
            "<parameter=n>2</parameter></function></tool_call><|im_end|>\n") in s
    # no tool role: the result goes back as a user turn wrapped in <tool_response>
    assert "<|im_start|>user\n<tool_response>12:00</tool_response><|im_end|>\n" in s
    assert "<|im_start|>tool" not in s


def test_markers_are_single_tokens(tok):
    for m in ("<think>", "</think>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"):
        assert len(tok(m, add_special_tokens=False)["input_ids"]) == 1, m


def test_saved_folder_has_template(tmp_path):
    t = train_tokenizer(CORPUS, 300)
    t.save_pretrained(tmp_path)
    files = {p.name for p in tmp_path.iterdir()}
    assert "tokenizer.json" in files
    cfg = json.loads((tmp_path / "tokenizer_config.json").read_text())
    template = cfg.get("chat_template") or (tmp_path / "chat_template.jinja").read_text()
    assert "enable_thinking" in template
