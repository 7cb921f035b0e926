"""Long context (LongBench v2 letter scoring, rows written here in its format) and SWE-bench Verified (genuine
instances): the gold patch is extracted and well-formed, a broken one is not, and resolving is refused without the
per-instance container executor (execution happens at scale)."""
from __future__ import annotations

import pytest

from recipe.eval.benchmarks import longbench_swebench as agentic
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.sources import read_rows

LB_ROW = {"_id": "lb1", "domain": "Single-Document QA", "sub_domain": "x", "difficulty": "hard", "length": "short",
          "context": "The vault code is 4721. " * 50, "question": "What is the vault code?", "choice_A": "1274",
          "choice_B": "4721", "choice_C": "7421", "choice_D": "2147", "answer": "B"}


def test_longbench_letter_scoring():
    s = get_suite("longbench_v2")
    assert "The vault code is 4721." in s.messages(LB_ROW, True)[0]["content"]
    assert s.score(LB_ROW, "<think>read</think>The correct answer is (B)", True)["score"] == 1.0
    assert s.score(LB_ROW, "<think>read</think>The correct answer is (C)", True)["score"] == 0.0
    assert s.score(LB_ROW, "<think>The correct answer is (B)", True)["no_answer"]


def test_swebench_patch_checked_here_execution_needs_containers(shared_dir):
    rows = read_rows(shared_dir / "fixtures/eval/swebench_verified/instances.jsonl")
    assert len(rows) == 5
    s = get_suite("swebench_verified")
    row = rows[0]
    gold = f"Here is the fix:\n```diff\n{row['patch']}```"
    assert agentic.patch_problems(agentic.extract_patch(gold)) == []
    with pytest.raises(agentic.ExecutionUnavailable, match="container"):
        s.score(row, gold, False)
    head, sep, rest = row["patch"].partition("\n@@ ")
    hunk_header, nl, body = rest.partition("\n")
    broken = head + sep + hunk_header + nl + "+one line the header does not count\n" + body
    assert s.score(row, f"```diff\n{broken}```", False)["reason"] == "malformed_patch"
    assert s.score(row, "I could not fix it.", False)["no_answer"]
    agentic.set_swebench_executor(lambda r, p: {"resolved": p.strip() == r["patch"].strip()})
    try:
        assert s.score(row, gold, False)["score"] == 1.0
    finally:
        agentic.set_swebench_executor(None)
    assert "per-instance containers" in s.execution
