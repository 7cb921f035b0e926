"""AIME 2025 / HMMT Feb 2025 scorers on the genuine fixture rows: the gold answer in the last \\boxed{} after
</think> scores 1, a perturbed answer 0, an unclosed <think> is no answer (a \\boxed inside it is never mined)."""
from __future__ import annotations

import pytest

from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.sources import read_rows


def _rows(shared_dir, name):
    path = {"aime25": "fixtures/eval/aime25/test.txt", "hmmt_feb25": "fixtures/eval/hmmt_feb25/hmmt_feb25.jsonl"}[name]
    return read_rows(shared_dir / path)


def _gold(row):
    return row.get("expected_answer", row.get("answer"))


def _perturb(gold: str) -> str:
    if gold.isdigit():
        return str(int(gold) + 1)
    if "," in gold:  # HMMT #10 lists two values: one of them alone is wrong
        return gold.split(",")[0]
    return f"2\\left({gold}\\right)"


@pytest.mark.parametrize("name", ["aime25", "hmmt_feb25"])
def test_gold_scores_one_perturbed_zero_unclosed_think_no_answer(shared_dir, name):
    suite = get_suite(name)
    rows = _rows(shared_dir, name)
    assert len(rows) == 30
    for row in rows:
        gold = str(_gold(row))
        ok = suite.score(row, f"<think>work it out</think>The answer is $\\boxed{{{gold}}}$.", True)
        assert ok["score"] == 1.0 and not ok["no_answer"], (row, ok)
        bad = suite.score(row, f"<think>work</think>So \\boxed{{{_perturb(gold)}}}.", True)
        assert bad["score"] == 0.0 and not bad["no_answer"], (row, bad)
        unclosed = suite.score(row, f"<think>maybe \\boxed{{{gold}}} but let me check", True)
        assert unclosed["score"] == 0.0 and unclosed["no_answer"] and unclosed["reason"] == "unclosed_think"


def test_last_box_wins_and_thinking_text_is_never_graded(shared_dir):
    suite = get_suite("aime25")
    row = _rows(shared_dir, "aime25")[0]  # expected_answer "70"
    assert suite.score(row, "<think>\\boxed{70}</think>no box here", True)["no_answer"]
    assert suite.score(row, "<think>x</think>\\boxed{7} wait, \\boxed{70}", True)["score"] == 1.0
    assert suite.score(row, "<think>x</think>\\boxed{70} wait, \\boxed{7}", True)["score"] == 0.0
    # non-thinking responses are graded whole; a parser-split response grades only the visible content
    assert suite.score(row, "\\boxed{70}", False)["score"] == 1.0
    split = {"role": "assistant", "content": "\\boxed{70}", "reasoning_content": "\\boxed{3}"}
    assert suite.score(row, split, True)["score"] == 1.0
