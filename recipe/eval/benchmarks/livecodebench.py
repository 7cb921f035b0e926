"""LiveCodeBench-style code generation (``livecodebench``): rows in ``livecodebench/code_generation_lite`` format,
solutions run on the public AND private tests in ``recipe.sandbox``; a sample passes only if every test passes;
pass@1 averaged over k (avg@k) is the score (EVAL.md §2: v6 2408-2505, avg@8, T 1.0 / top-p 0.95).

Row fields: ``question_id``, ``question_content``, ``starter_code``, ``public_test_cases`` and ``private_test_cases``
(JSON lists of ``{input, output, testtype}``, ``testtype`` ``stdin`` or ``functional``), ``metadata`` (JSON; functional
problems name ``func_name``). Private tests may be a JSON string or base64(zlib(JSON)); LCB's upstream
pickle-encoded form is refused (never unpickled) with a message saying so. Programs run as LCB's own runner runs them
(``lcb_grading``: its import prelude and recursion limit, functional answers compared as Python values, stdin output
line by line then as decimals), 6 s/test and 1 GiB (LCB defaults). Extraction: the last ```python block after
``</think>``.
"""
from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from recipe.eval.benchmarks import lcb_grading
from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.rewards.code_verifier import extract_code
from recipe.rewards.extract import BadResponse, parse_response

SYSTEM = "You are a helpful and harmless assistant.\n\nYou are not allowed to use any tools."
USER = ("{question_content}{starter_code}\n\nWrite Python code to solve the problem. Please place the solution code in "
        "the following format:\n```python\n# Your solution code here\n```")  # NeMo-Gym cascade.yaml (fixture README)
TIME_LIMIT_S, MEMORY_MB = 6.0, 1024


def decode_tests(value: Any, field: str) -> list[dict]:
    if isinstance(value, list):
        tests = value
    elif isinstance(value, str):
        try:
            tests = json.loads(value)
        except ValueError:
            try:
                raw = zlib.decompress(base64.b64decode(value))
            except Exception:
                raise RowError(f"field {field!r}: neither JSON nor base64(zlib(JSON))") from None
            if raw[:1] == b"\x80":
                raise RowError(f"field {field!r} is pickle-encoded (LCB upstream); it is never unpickled here: convert "
                               "it to JSON once with a trusted tool")
            tests = json.loads(raw)
    else:
        raise RowError(f"field {field!r} must be a JSON list or string")
    if not isinstance(tests, list) or not all(isinstance(t, dict) and "input" in t and "output" in t for t in tests):
        raise RowError(f"field {field!r}: expected a list of {{input, output, testtype}}")
    return tests


def _row_tests(row: dict) -> tuple[list[dict], list[dict], str | None]:
    pub = decode_tests(row["public_test_cases"], "public_test_cases")
    priv = decode_tests(row["private_test_cases"], "private_test_cases")
    meta = row.get("metadata") or {}
    if isinstance(meta, str):
        meta = json.loads(meta or "{}")
    kinds = {t.get("testtype", "stdin") for t in pub + priv}
    func = None
    if "functional" in kinds:
        func = meta.get("func_name")
        if not func:
            raise RowError("functional tests need metadata.func_name")
    return pub, priv, func


def run_tests(code: str, tests: list[dict], func: str | None) -> tuple[int, list[str]]:
    """(tests passed, statuses); stops at the first failure."""
    from recipe.sandbox import Limits
    from recipe.sandbox.cpp import run_suite
    if func:
        program, equal = lcb_grading.functional_program(code, func), lcb_grading.functional_equal
    else:
        program, equal = lcb_grading.stdin_program(code), lcb_grading.stdin_equal
    limits = Limits(time_limit_s=TIME_LIMIT_S, memory_mb=MEMORY_MB, stdout_limit_bytes=lcb_grading.stdout_cap(tests))
    res = run_suite(program, tests, language="python", limits=limits, compare=equal)
    statuses = [t.status for t in res.tests]
    return sum(1 for t in res.tests if t.passed), statuses


def score_lcb(row: dict, response: Any, thinking: bool) -> dict:
    pub, priv, func = _row_tests(row)
    try:
        parsed = parse_response(response, "thinking" if thinking else None)
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None:
        return {"score": 0.0, "no_answer": True, "reason": "unclosed_think"}
    code = extract_code(parsed.answer, "python")
    if code is None:
        return {"score": 0.0, "no_answer": True, "reason": "no_code_block"}
    n_pub, st_pub = run_tests(code, pub, func)
    if n_pub < len(pub):
        return {"score": 0.0, "no_answer": False, "reason": f"public:{st_pub[-1]}", "public_passed": False}
    n_priv, st_priv = run_tests(code, priv, func) if priv else (0, [])
    ok = n_priv == len(priv)
    return {"score": 1.0 if ok else 0.0, "no_answer": False, "public_passed": True,
            "reason": "correct" if ok else f"private:{st_priv[-1]}", "tests": len(pub) + len(priv)}


def lcb_messages(row: dict, thinking: bool) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": USER.format(question_content=row["question_content"],
                                                    starter_code=row.get("starter_code") or "")}]


register_suite(Suite(
    name="livecodebench", description="LiveCodeBench v6 code generation: public + private tests in the sandbox",
    id_field="question_id", required_fields=("question_content", "public_test_cases", "private_test_cases"),
    messages=lcb_messages, score=score_lcb, metric="pass@1 (avg@k)",
    defaults=SamplingParams(temperature=1.0, top_p=0.95, max_tokens=131072, thinking=True, k=8),
    scorer_version="lcb-2"))
