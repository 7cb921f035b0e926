"""``code`` verifier: run the response's program on the row's tests in the sandbox; strict pass-all reward.

Extraction: the last fenced code block after ``</think>`` whose language matches (```python / ```py /
```cpp / ```c++; an untagged block is accepted), else ``no_answer``. Reward 1 only if every test passes
(RECIPE.md stage 6, "strict binary pass-all-tests"); ``details.tests`` lists each test's verdict
(status, wall/CPU seconds). Runs stop at the first failing test (set ``stop_on_failure: false`` in the
spec to run all). Output comparison: ``compare: tokens`` (default, Codeforces ``wcmp``) or ``lines``
(NeMo-Gym code_gen); a ``checker`` (C++ source) overrides both. Limits: ``time_limit_s`` (default 6, LiveCodeBench), ``memory_mb`` (default 1024).
All execution goes through ``recipe.sandbox``; without bubblewrap this verifier fails loudly
(``SandboxUnavailable``) rather than run model code unisolated.
"""
from __future__ import annotations

import re
from typing import Any

from recipe.rewards.extract import parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import FieldError, require

_FENCE = re.compile(r"```([A-Za-z0-9_+\-]*)[ \t]*\n(.*?)```", re.DOTALL)
_LANGS = {"python": {"python", "py", "python3", ""}, "cpp": {"cpp", "c++", "cc", "cxx", ""}}


def extract_code(text: str, language: str) -> str | None:
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
    for tag, body in reversed(blocks):
        if tag in _LANGS[language] and body.strip():
            return body
    return None


def tests_of(spec: dict) -> list[dict]:
    tests = spec.get("tests")
    if tests is None and isinstance(spec.get("unit_tests"), dict):  # NeMo-Gym code_gen verifier_metadata
        ut = spec["unit_tests"]
        tests = [{"input": i, "output": o} for i, o in zip(ut.get("inputs") or [], ut.get("outputs") or [])]
    if tests is None:
        raise FieldError("missing_field:tests", "verifier field 'tests' is missing")
    if not isinstance(tests, list) or not tests or not all(isinstance(t, dict) and "output" in t for t in tests):
        raise FieldError("invalid_field:tests", "tests must be a non-empty list of {input, output}")
    return tests


@register("code")
def verify_code(record: dict, response: Any) -> VerifierResult:
    from recipe.sandbox import Limits
    from recipe.sandbox.cpp import run_suite

    spec = record.get("verifier") or {}
    tests = tests_of(spec)
    language = str(spec.get("language") or "python").lower()
    language = {"c++": "cpp", "python3": "python", "py": "python"}.get(language, language)
    if language not in _LANGS:
        return fail("invalid_field:language", language=language)
    try:
        limits = Limits(time_limit_s=float(require(spec, "time_limit_s", (int, float), 6.0)),
                        memory_mb=int(require(spec, "memory_mb", (int, float), 1024)))
    except ValueError as e:
        return fail("invalid_field:limits", error=str(e))
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    code = extract_code(parsed.answer, language)
    if code is None:
        return fail("no_answer", language=language)
    compare = spec.get("compare", "tokens")
    if compare not in ("tokens", "lines"):
        return fail("invalid_field:compare", compare=compare)
    suite = run_suite(code, tests, language=language, limits=limits, checker=spec.get("checker"),
                      stop_on_failure=bool(spec.get("stop_on_failure", True)), compare=compare)
    details = {"language": language, "n_tests": len(tests), "tests": [t.to_dict() for t in suite.tests],
               "isolation": suite.isolation.get("mode")}
    if not suite.compiled:
        details["compile_stderr"] = suite.compile_stderr[-2000:]
        return VerifierResult(0.0, "compile_error", details)
    if suite.all_passed and len(suite.tests) == len(tests):
        return VerifierResult(1.0, "correct", details)
    first_bad = next((t for t in suite.tests if not t.passed), None)
    return VerifierResult(0.0, first_bad.status if first_bad else "wrong_answer", details)
