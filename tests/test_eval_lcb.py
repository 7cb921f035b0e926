"""LiveCodeBench-style scoring on code tasks written here in LCB's `code_generation_lite` row format (no genuine LCB
rows are reachable): stdin and functional (LeetCode) problems, public + private tests (private as base64(zlib(JSON))
like upstream, minus pickle), run in the sandbox; pass@1 averaged over k."""
from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from recipe.eval.benchmarks.registry import RowError, get_suite
from recipe.eval.harness import summarize_verdicts
from recipe.sandbox import probe

pytestmark = pytest.mark.skipif(not probe()["available"],
                                reason="sandbox (bubblewrap) unavailable")


def _enc(tests) -> str:
    return base64.b64encode(zlib.compress(json.dumps(tests).encode())).decode()


STDIN_ROW = {
    "question_title": "Sum of pairs", "question_id": "t001", "platform": "atcoder", "contest_id": "t",
    "contest_date": "2024-09-01T00:00:00", "difficulty": "easy", "starter_code": "",
    "question_content": "Read N then N lines of two integers; print the sum of each line.",
    "public_test_cases": json.dumps([{"input": "2\n1 2\n3 4\n", "output": "3\n7\n", "testtype": "stdin"}]),
    "private_test_cases": _enc([{"input": "1\n-5 5\n", "output": "0\n", "testtype": "stdin"},
                                {"input": "3\n1 1\n2 2\n10 -3\n", "output": "2\n4\n7\n", "testtype": "stdin"}]),
    "metadata": "{}"}

FUNC_ROW = {
    "question_title": "Two sum", "question_id": "t002", "platform": "leetcode", "contest_id": "t",
    "contest_date": "2024-10-01T00:00:00", "difficulty": "easy",
    "starter_code": "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
    "question_content": "Return the indices of the two numbers that add up to target.",
    "public_test_cases": json.dumps([{"input": "[2,7,11,15]\n9", "output": "[0, 1]", "testtype": "functional"}]),
    "private_test_cases": _enc([{"input": "[3,2,4]\n6", "output": "[1,2]", "testtype": "functional"},
                                {"input": "[1,5,5]\n10", "output": "[1,2]", "testtype": "functional"}]),
    "metadata": json.dumps({"func_name": "twoSum"})}

STDIN_GOLD = "```python\nn=int(input())\nfor _ in range(n):\n    a,b=map(int,input().split())\n    print(a+b)\n```"
STDIN_PUBLIC_ONLY = "```python\nn=int(input())\nfor _ in range(n):\n    a,b=map(int,input().split())\n    print(abs(a)+abs(b))\n```"
FUNC_GOLD = ("```python\nfrom typing import List\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
             "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
             "                return [seen[target - x], i]\n            seen[x] = i\n```")
FUNC_WRONG = FUNC_GOLD.replace("return [seen[target - x], i]", "return [i, seen[target - x]]")


def test_gold_passes_perturbed_fails_unclosed_think_is_no_answer():
    s = get_suite("livecodebench")
    assert s.score(STDIN_ROW, f"<think>easy</think>{STDIN_GOLD}", True)["score"] == 1.0
    v = s.score(STDIN_ROW, f"<think>x</think>{STDIN_PUBLIC_ONLY}", True)  # passes public, fails private
    assert v["score"] == 0.0 and v["public_passed"] and v["reason"].startswith("private:")
    assert s.score(FUNC_ROW, f"<think>x</think>{FUNC_GOLD}", True)["score"] == 1.0
    v = s.score(FUNC_ROW, f"<think>x</think>{FUNC_WRONG}", True)
    assert v["score"] == 0.0 and v["reason"].startswith("public:")
    v = s.score(STDIN_ROW, f"<think>{STDIN_GOLD}", True)
    assert v["no_answer"] and v["score"] == 0.0


def test_pass_at_1_averaged_over_k():
    s = get_suite("livecodebench")
    verdicts = {"t001": [s.score(STDIN_ROW, r, False) for r in (STDIN_GOLD, STDIN_PUBLIC_ONLY, STDIN_GOLD, "no code")],
                "t002": [s.score(FUNC_ROW, r, False) for r in (FUNC_GOLD, FUNC_GOLD, FUNC_WRONG, FUNC_GOLD)]}
    summ = summarize_verdicts(s, verdicts)
    assert summ["k"] == 4 and summ["score"] == pytest.approx(100 * (2 / 4 + 3 / 4) / 2)
    assert summ["pass@4"] == 100.0 and summ["no_answer_rate"] == pytest.approx(100 / 8)


def test_pickled_private_tests_are_refused():
    row = dict(STDIN_ROW, private_test_cases=base64.b64encode(zlib.compress(pickle.dumps("x"))).decode())
    with pytest.raises(RowError, match="pickle"):
        get_suite("livecodebench").score(row, STDIN_GOLD, False)
