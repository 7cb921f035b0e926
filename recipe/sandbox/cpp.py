"""Competitive-programming runs in the sandbox: compile C++ (EVAL.md §6 flags), run tests, apply checkers.

- Solutions: ``g++ -DEVAL -std=gnu++17 -O2 -pipe -s main.cpp -o main`` (``<bits/stdc++.h>`` and
  ``using namespace std`` are prepended when missing), compiled inside the same sandbox with their own
  limits (``COMPILE_LIMITS``); a failed build is a ``compile_error`` verdict.
- Checkers: ``g++ -std=gnu++17 -O2``, run as ``checker input expected_output program_output``; a
  checker that prints a number in [0, 1] gives that score (IOI style), otherwise exit code 0 = accepted
  (testlib style).
- Without a checker the output is compared token by token (``compare="tokens"``, the Codeforces ``wcmp``
  standard checker) or line by line (``compare="lines"``: trailing spaces and final blank lines ignored,
  as NeMo-Gym code_gen does), or by a caller's own ``compare(got, expected) -> bool``.
Python solutions use the same test loop with ``python3 main.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from recipe.sandbox.bwrap_runner import Session
from recipe.sandbox.types import Limits, Verdict

COMPILE_LIMITS = Limits(time_limit_s=30, memory_mb=2048, max_processes=32, max_file_mb=256, wall_limit_s=60,
                        workdir_quota_mb=512, stdout_limit_bytes=64 << 10, stderr_limit_bytes=64 << 10)
SOLUTION_FLAGS = ["-DEVAL", "-std=gnu++17", "-O2", "-pipe", "-s"]
CHECKER_FLAGS = ["-std=gnu++17", "-O2"]


def with_prelude(source: str) -> str:
    head = ""
    if "bits/stdc++.h" not in source:
        head += "#include <bits/stdc++.h>\n"
    if "using namespace std" not in source:
        head += "using namespace std;\n"
    return head + source


def compile_cpp(session: Session, source: str, name: str = "main", flags: list[str] | None = None,
                prelude: bool = True) -> Verdict:
    session.write(f"{name}.cpp", with_prelude(source) if prelude else source)
    v = session.run(["g++", *(flags or SOLUTION_FLAGS), f"{name}.cpp", "-o", name], limits=COMPILE_LIMITS)
    if v.status != "ok":
        v.status = "compile_error"
    return v


def tokens_equal(got: str, expected: str) -> bool:
    return got.split() == expected.split()


def lines_equal(got: str, expected: str) -> bool:
    """Line-by-line after stripping trailing whitespace per line and trailing blank lines (NeMo-Gym code_gen)."""
    norm = lambda s: [ln.rstrip() for ln in s.rstrip().split("\n")]  # noqa: E731
    return norm(got) == norm(expected)


COMPARATORS = {"tokens": tokens_equal, "lines": lines_equal}


@dataclass
class TestOutcome:
    index: int
    passed: bool
    score: float
    status: str
    wall_s: float
    cpu_s: float
    detail: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SuiteResult:
    compiled: bool
    tests: list[TestOutcome] = field(default_factory=list)
    compile_stderr: str = ""
    isolation: dict = field(default_factory=dict)

    @property
    def all_passed(self) -> bool:
        return self.compiled and bool(self.tests) and all(t.passed for t in self.tests)


def run_suite(source: str, tests: list[dict], *, language: str = "cpp", limits: Limits | None = None,
              checker: str | None = None, stop_on_failure: bool = True, unsafe_no_isolation: bool = False,
              compare: str | Callable[[str, str], bool] = "tokens") -> SuiteResult:
    """Build ``source`` once, then run every ``{"input", "output"}`` test in its own fresh sandbox run."""
    lim = limits or Limits()
    equal = compare if callable(compare) else COMPARATORS[compare]
    with Session(lim, unsafe_no_isolation=unsafe_no_isolation) as s:
        if language == "cpp":
            v = compile_cpp(s, source)
            if v.status != "ok":
                return SuiteResult(False, compile_stderr=v.stderr[-4000:], isolation=v.isolation)
            program = ["./main"]
        elif language == "python":
            s.write("main.py", source)
            program = ["python3", "main.py"]
        else:
            raise ValueError(f"unsupported language {language!r}; use 'python' or 'cpp'")
        if checker:
            cv = compile_cpp(s, checker, name="checker", flags=CHECKER_FLAGS, prelude=False)
            if cv.status != "ok":
                raise ValueError("the checker does not compile: " + cv.stderr[-500:])
        result = SuiteResult(True)
        for i, t in enumerate(tests):
            v = s.run(program, stdin=str(t.get("input", "")), limits=lim)
            result.isolation = v.isolation
            if v.status != "ok":
                out = TestOutcome(i, False, 0.0, v.status, v.wall_s, v.cpu_s, v.detail)
            elif checker:
                score = _check(s, t, v.stdout)
                out = TestOutcome(i, score >= 1.0, score, "ok" if score >= 1.0 else "wrong_answer", v.wall_s, v.cpu_s)
            else:
                ok = equal(v.stdout, str(t.get("output", "")))
                out = TestOutcome(i, ok, 1.0 if ok else 0.0, "ok" if ok else "wrong_answer", v.wall_s, v.cpu_s)
            result.tests.append(out)
            if stop_on_failure and not out.passed:
                break
        return result


def _check(s: Session, test: dict, output: str) -> float:
    s.write("input.txt", str(test.get("input", "")))
    s.write("expected.txt", str(test.get("output", "")))
    s.write("output.txt", output)
    v = s.run(["./checker", "input.txt", "expected.txt", "output.txt"], limits=Limits(time_limit_s=10, memory_mb=1024))
    for p in ("input.txt", "expected.txt", "output.txt"):
        (s.path / p).unlink(missing_ok=True)
    text = v.stdout.strip().split()
    if v.status in ("ok", "runtime_error") and text:
        try:
            return min(1.0, max(0.0, float(text[0])))
        except ValueError:
            pass
    return 1.0 if v.status == "ok" else 0.0
