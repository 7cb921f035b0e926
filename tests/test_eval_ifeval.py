"""IFEval / IFBench scorers on the genuine rows: the GPT-4 responses shipped with IFEval score as the reference
implementation reports them (README/paper: prompt strict 76.89, instruction strict 83.57, prompt loose 79.30,
instruction loose 85.37; here within 1 point, checkers re-implemented without NLTK), the 8 loose variants rescue a
response wrapped in an intro line and markdown, an unclosed think is no answer, an unknown instruction id is an error."""
from __future__ import annotations

import json

import pytest

from recipe.eval.harness import summarize_verdicts
from recipe.eval.sources import read_rows
from recipe.eval.suites import RowError, get_suite
from recipe.rewards.if_text import punkt_sentences


def test_gpt4_reference_responses_match_the_published_ifeval_numbers(shared_dir):
    suite = get_suite("ifeval")
    rows = {r["prompt"]: r for r in read_rows(shared_dir / "ifeval/input_data.jsonl")}
    verdicts = {}
    for d in read_rows(shared_dir / "ifeval/input_response_data_gpt4_20231107_145030.jsonl"):
        row = rows[d["prompt"]]
        verdicts[str(row["key"])] = [suite.score(row, d["response"], False)]
    s = summarize_verdicts(suite, verdicts)
    assert s["n"] == 541
    for key, ref in (("prompt_level_strict", 76.89), ("instruction_level_strict", 83.57),
                     ("prompt_level_loose", 79.30), ("instruction_level_loose", 85.37)):
        assert abs(s[key] - ref) <= 1.0, (key, s[key], ref)
    assert s["prompt_level_loose"] >= s["prompt_level_strict"]


def test_loose_variants_unclosed_think_and_sentence_rule(shared_dir):
    suite = get_suite("ifeval")
    row = {"key": 1, "prompt": "p", "instruction_id_list": ["startend:quotation"], "kwargs": [{}]}
    v = suite.score(row, "Sure, here it is:\n\"quoted answer\"", False)
    assert v["follow_strict"] == [False] and v["follow_loose"] == [True] and v["score"] == 0.0
    v = suite.score(row, "\"quoted\"", False)
    assert v["score"] == 1.0 and v["prompt_loose"]
    v = suite.score(row, "<think>\"quoted\" but still thinking", True)
    assert v["no_answer"] and v["follow_strict"] == [False] and v["follow_loose"] == [False]
    # punkt-like: a line break or a list number does not end a sentence
    assert len(punkt_sentences("Steps:\n1. Mix it.\n2. Bake it.")) == 2
    assert len(punkt_sentences("One line\nsecond line. Next one!")) == 2


def test_unknown_instruction_id_is_an_error_not_false(shared_dir):
    row = dict(read_rows(shared_dir / "fixtures/eval/ifbench/IFBench_test.jsonl")[0])
    row["instruction_id_list"] = ["made:up_id"]
    with pytest.raises(RowError, match="unknown instruction id"):
        get_suite("ifbench").score(row, "text", False)


def test_ifbench_fixture_reads_300_rows_split_on_newline_only(shared_dir):
    rows = read_rows(shared_dir / "fixtures/eval/ifbench/IFBench_test.jsonl")
    assert len(rows) == 300 and len({r["key"] for r in rows}) == 300
    ids = {i for r in rows for i in r["instruction_id_list"]}
    assert len(ids) == 58
