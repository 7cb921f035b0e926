"""``unit_tests`` verifier: the response's Python code (last ```python block after the thinking) is saved as
``solution_file`` and the record's hidden ``tests`` (``{file name: source with test_* functions}``) run against it in
the sandbox (``recipe.rewards.pytests``). Strict binary reward (RECIPE.md §4.1 row 6): 1 only if every test
passes; ``details`` carry passed/total, the sandbox status and whether the verdict came from the cache.
Spec fields: ``tests`` (required), ``solution_file`` (default ``solution.py``), ``time_limit_s`` (default 2),
``memory_mb`` (default 512).
"""
from __future__ import annotations

from typing import Any

from recipe.rewards.code_verifier import extract_code
from recipe.rewards.extract import parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import FieldError, require


def test_files(spec: dict) -> dict[str, str]:
    tests = require(spec, "tests", dict)
    if not tests or not all(isinstance(k, str) and k.endswith(".py") and isinstance(v, str) for k, v in tests.items()):
        raise FieldError("invalid_field:tests", "tests must map *.py file names to test source")
    return tests


def limits_of(spec: dict):
    from recipe.sandbox import Limits

    return Limits(time_limit_s=float(require(spec, "time_limit_s", (int, float), 2.0)),
                  memory_mb=int(require(spec, "memory_mb", (int, float), 512)), max_processes=16,
                  stdout_limit_bytes=64 << 10, workdir_quota_mb=16, max_file_mb=8)


def grade(files: dict[str, str], spec: dict, extra: dict | None = None) -> VerifierResult:
    from recipe.rewards.pytests import cached_report

    rep, cached = cached_report(files, test_files(spec), limits_of(spec))
    details = {**(extra or {}), **rep.to_dict(), "cached": cached}
    if rep.all_passed:
        return VerifierResult(1.0, "correct", details)
    if rep.status != "ok":
        return VerifierResult(0.0, rep.status, details)
    return VerifierResult(0.0, "tests_failed", details)


@register("unit_tests")
def verify_unit_tests(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    test_files(spec)
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    code = extract_code(parsed.answer, "python")
    if code is None:
        return fail("no_answer")
    return grade({str(spec.get("solution_file") or "solution.py"): code}, spec)


verify_unit_tests.sandboxed = True  # type: ignore[attr-defined]  # verify_batch runs these in a thread pool
