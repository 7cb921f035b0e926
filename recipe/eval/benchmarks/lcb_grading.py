"""How LiveCodeBench grades a program, rule by rule (facts from the official runner,
``lcb_runner/evaluation/testing_util.py`` in LiveCodeBench/LiveCodeBench), for ``recipe.eval.benchmarks.livecodebench``.

- Every program runs after the runner's import prelude: ``from <m> import *`` for the 16 modules below, then
  ``builtins`` and ``typing``; ``import <m>`` for the 16; then ``sys.setrecursionlimit(50000)``; so a
  LeetCode answer that copies its starter code's ``List[int]``, or uses ``Counter`` / ``gcd`` without an import, runs.
- Functional (LeetCode) tests: ``Solution().<func_name>`` (a module-level function when the code has no
  ``class Solution``) is called with one JSON value per input line, with the code loaded as a module (its
  ``__main__`` block does not run); a returned tuple becomes a list; the result is compared with the JSON-decoded
  expected output as Python values (``==``: ``1.0`` equals ``1``).
- stdin tests: the output and the expected output are stripped, split into lines and each line stripped; the line
  counts must agree; a line passes when equal as text, else when both split into the same list of ``Decimal``s
  (``0.50`` equals ``0.5``).
- The runner captures output in memory with no cap; here the cap is at least ``MIN_STDOUT_BYTES`` and twice the
  largest expected output, so a correct answer never hits ``output_limit``.
"""
from __future__ import annotations

import ast
import json
from decimal import Decimal, InvalidOperation
from typing import Any

PRELUDE_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
                   "statistics", "itertools", "functools", "operator", "io", "sys", "json")
# star imports in the runner's order: the 16 modules, then builtins (restores names such as io.open), then typing
PRELUDE = ("".join(f"from {m} import *\n" for m in (*PRELUDE_MODULES, "builtins", "typing"))
           + "".join(f"import {m}\n" for m in PRELUDE_MODULES) + "sys.setrecursionlimit(50000)\n")
MIN_STDOUT_BYTES = 32 << 20

# Loads the solution as module "tmp_sol" (not "__main__"), keeps its own prints off stdout, then prints repr(result).
_FUNCTIONAL_DRIVER = '''import io as _io, json as _json, os as _os, sys as _sys
_SRC = {src!r}
_ns = {{"__name__": "tmp_sol"}}
_out = _sys.stdout
_sys.stdout = open(_os.devnull, "w")
_args = [_json.loads(_l) for _l in _sys.stdin.read().split("\\n") if _l.strip()]
exec(compile({prelude!r} + "\\n\\n" + _SRC, "solution.py", "exec"), _ns)
_target = _ns["Solution"]() if "class Solution" in _SRC else None
_fn = getattr(_target, {func!r}) if _target is not None else _ns[{func!r}]
_res = _fn(*_args)
if isinstance(_res, tuple):
    _res = list(_res)
_sys.stdout = _out
print(repr(_res))
'''


def stdin_program(code: str) -> str:
    return PRELUDE + "\n" + code


def functional_program(code: str, func: str) -> str:
    return _FUNCTIONAL_DRIVER.format(src=code, prelude=PRELUDE, func=func)


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdin_equal(got: str, expected: str) -> bool:
    """Line by line: exact after stripping, else equal as decimals, token by token."""
    g, e = _stripped_lines(got), _stripped_lines(expected)
    if len(g) != len(e):
        return False
    for a, b in zip(g, e):
        if a == b:
            continue
        da, db = _decimals(a), _decimals(b)
        if da is None or db is None or da != db:
            return False
    return True


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def functional_equal(got: str, expected: str) -> bool:
    """``got`` is the repr the driver printed; ``expected`` the test's JSON output; equal as Python values."""
    ok, value = _literal(got)
    if not ok:
        return False
    try:
        return bool(value == json.loads(expected))
    except (ValueError, RecursionError):
        return False


def stdout_cap(tests: list[dict]) -> int:
    largest = max((len(str(t.get("output", "")).encode()) for t in tests), default=0)
    return max(MIN_STDOUT_BYTES, 2 * largest)
