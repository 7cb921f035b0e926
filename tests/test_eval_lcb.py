"""LiveCodeBench-style scoring on code tasks written here in LCB's `code_generation_lite` row format (no genuine LCB
rows are reachable): stdin and functional (LeetCode) problems, public + private tests (private as base64(zlib(JSON))
like upstream, minus pickle), run in the sandbox; pass@1 averaged over k."""
from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from recipe.eval.benchmarks.suite_registry import RowError, get_suite
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


# --- LCB's own runner rules (lcb_runner/evaluation/testing_util.py), rows written here, no imports in the answers ---

def _stdin_row(qid: str, tests: list[dict]) -> dict:
    return dict(STDIN_ROW, question_id=qid, public_test_cases=json.dumps(tests[:1]), private_test_cases=_enc(tests[1:]))


def _func_row(qid: str, func: str, starter: str, tests: list[dict]) -> dict:
    return dict(FUNC_ROW, question_id=qid, starter_code=starter, metadata=json.dumps({"func_name": func}),
                public_test_cases=json.dumps(tests[:1]), private_test_cases=_enc(tests[1:]))


def _py(body: str) -> str:
    return f"<think>ok</think>```python\n{body}\n```"


def test_starter_code_solution_without_imports_runs_with_the_prelude():
    row = _func_row("t010", "maxPair", "class Solution:\n    def maxPair(self, nums: List[int]) -> int:\n        ",
                    [{"input": "[1,2,3]", "output": "5", "testtype": "functional"},
                     {"input": "[4,4]", "output": "8", "testtype": "functional"}])
    ans = _py("class Solution:\n    def maxPair(self, nums: List[int]) -> int:\n"
              "        s = sorted(nums)\n        return s[-1] + s[-2]")
    v = get_suite("livecodebench").score(row, ans, True)
    assert v["score"] == 1.0, v


def test_counter_gcd_and_deep_recursion_without_imports():
    row = _stdin_row("t011", [{"input": "12 18\naab\n", "output": "6\n2\n", "testtype": "stdin"},
                              {"input": "7 21\nzzzz\n", "output": "7\n4\n", "testtype": "stdin"}])
    ans = _py("a, b = map(int, input().split())\nprint(gcd(a, b))\nprint(max(Counter(input().strip()).values()))")
    assert get_suite("livecodebench").score(row, ans, True)["score"] == 1.0
    deep = _stdin_row("t012", [{"input": "3000\n", "output": "3000\n", "testtype": "stdin"},
                               {"input": "20000\n", "output": "20000\n", "testtype": "stdin"}])
    rec = _py("def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nprint(f(int(input())))")  # > 1000 frames
    assert get_suite("livecodebench").score(deep, rec, True)["score"] == 1.0


def test_stdin_lines_exact_then_as_decimals():
    row = _stdin_row("t013", [{"input": "1\n", "output": "0.5\n", "testtype": "stdin"},
                              {"input": "3\n", "output": "1.5 2\nyes\n", "testtype": "stdin"}])
    s = get_suite("livecodebench")
    ans = _py("n = int(input())\nif n == 1:\n    print('0.50')\nelse:\n    print('1.500  2.0  ')\n    print('yes')")
    assert s.score(row, ans, True)["score"] == 1.0
    # a different number, a different word, and a missing line are still wrong
    for bad in ("print('0.51')", "print('0.5')\nprint('extra')", "n = int(input())\nprint('0.5' if n == 1 else '1.5 2')"):
        v = s.score(row, _py(bad), True)
        assert v["score"] == 0.0 and "wrong_answer" in v["reason"], (bad, v)
    word = _stdin_row("t014", [{"input": "1\n", "output": "Yes\n", "testtype": "stdin"}])
    assert s.score(word, _py("input()\nprint('yes')"), True)["score"] == 0.0  # text compare is case-sensitive


def test_functional_answers_compare_as_python_values():
    row = _func_row("t015", "half", "class Solution:\n    def half(self, x: int) -> float:\n        ",
                    [{"input": "4", "output": "2", "testtype": "functional"},
                     {"input": "3", "output": "1.5", "testtype": "functional"}])
    s = get_suite("livecodebench")
    assert s.score(row, _py("class Solution:\n    def half(self, x):\n        return x / 2"), True)["score"] == 1.0  # 2.0 == 2
    pair = _func_row("t016", "pair", "class Solution:\n    def pair(self, x: int) -> List[int]:\n        ",
                     [{"input": "1", "output": "[1, 2]", "testtype": "functional"}])
    tup = _py("class Solution:\n    def pair(self, x):\n        print('debug', x)\n        return (x, x + 1)\n\n"
              "if __name__ == '__main__':\n    print(input())")  # tuple counts as a list; prints and main are ignored
    assert s.score(pair, tup, True)["score"] == 1.0
    keys = _func_row("t017", "keys", "class Solution:\n    def keys(self, x: int) -> dict:\n        ",
                     [{"input": "1", "output": "{\"1\": 1}", "testtype": "functional"}])
    v = s.score(keys, _py("class Solution:\n    def keys(self, x):\n        return {x: x}"), True)
    assert v["score"] == 0.0 and "wrong_answer" in v["reason"]  # {1: 1} != {"1": 1} as Python values


def test_a_correct_two_megabyte_output_is_not_an_output_limit():
    n = 320_000
    expected = "".join(f"{i}\n" for i in range(n))
    assert len(expected) > 2_000_000
    row = _stdin_row("t018", [{"input": f"{n}\n", "output": expected, "testtype": "stdin"}])
    ans = _py("n = int(input())\nsys.stdout.write(''.join(f'{i}\\n' for i in range(n)))")
    v = get_suite("livecodebench").score(row, ans, True)
    assert v["score"] == 1.0, v
