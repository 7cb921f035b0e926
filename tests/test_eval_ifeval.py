"""IFEval / IFBench scorers on the genuine rows: the GPT-4 responses shipped with IFEval score exactly what Google's
code gives on them (strict 77.08 / 83.69, loose 79.67 / 85.61, prompt / instruction level: the reference checkers
themselves, docs/EVAL_HARNESS.md), the 8 loose variants rescue a response wrapped in an intro line and markdown, an
unclosed think is no answer in thinking mode while a literal ``<think>`` outside it is text, an unknown instruction
id is an error."""
from __future__ import annotations

import json

import pytest

from recipe.eval.benchmarks.suite_registry import RowError, get_suite
from recipe.eval.harness import summarize_verdicts
from recipe.eval.sources import read_rows


def test_gpt4_reference_responses_match_the_published_ifeval_numbers(shared_dir):
    suite = get_suite("ifeval")
    rows = {r["prompt"]: r for r in read_rows(shared_dir / "ifeval/input_data.jsonl")}
    verdicts = {}
    for d in read_rows(shared_dir / "ifeval/input_response_data_gpt4_20231107_145030.jsonl"):
        row = rows[d["prompt"]]
        verdicts[str(row["key"])] = [suite.score(row, d["response"], False)]
    s = summarize_verdicts(suite, verdicts)
    assert s["n"] == 541
    for key, ref in (("prompt_level_strict", 77.08), ("instruction_level_strict", 83.69),
                     ("prompt_level_loose", 79.67), ("instruction_level_loose", 85.61)):
        assert round(s[key], 2) == ref, (key, s[key], ref)
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
    # outside thinking mode the text is checked as given, as the official driver does: a literal <think> is text
    lower = {"key": 2, "prompt": "p", "instruction_id_list": ["change_case:english_lowercase"], "kwargs": [{}]}
    v = suite.score(lower, "<think> a stray tag, then plain lowercase english text follows here.", False)
    assert not v["no_answer"] and v["follow_strict"] == [True]
    # sentences are NLTK punkt's (through the reference checker): a line break does not end one
    n = {"key": 3, "prompt": "p", "instruction_id_list": ["length_constraints:number_sentences"],
         "kwargs": [{"num_sentences": 3, "relation": "less than"}]}
    assert suite.score(n, "One line\nsecond line. Next one!", False)["follow_strict"] == [True]
    assert suite.score(n, "Mix it. Bake it. Eat it.", False)["follow_strict"] == [False]


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
