"""Tiny code (paper §4.7 in miniature): write a Python function ``f`` from a one-line specification; graded by
hidden unit tests run in the sandbox with strict binary reward (verifier ``unit_tests``: every test passes, else 0).

A task is a family (add / multiply / maximum / divisibility / repeat a string ...) with a random constant ``k``;
the hidden tests call ``f`` on inputs the prompt never shows. The reference answer is the one-line function.
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example

# family -> (specification, body, argument name, input kind)
FAMILIES = {
    "add": ("returns x plus {k}", "x + {k}", "x", "int"),
    "sub": ("returns x minus {k}", "x - {k}", "x", "int"),
    "mul": ("returns x times {k}", "x * {k}", "x", "int"),
    "max": ("returns the larger of x and {k}", "max(x, {k})", "x", "int"),
    "min": ("returns the smaller of x and {k}", "min(x, {k})", "x", "int"),
    "div": ("returns True if x is divisible by {k}, else False", "x % {k} == 0", "x", "int"),
    "rep": ("returns the string s repeated {k} times", "s * {k}", "s", "str"),
    "len": ("returns the length of s plus {k}", "len(s) + {k}", "s", "str"),
}
_WORDS = ("ab", "cat", "x", "hello", "zz", "code", "", "q")


def reference_function(family: str, k: int) -> str:
    _, body, arg, _ = FAMILIES[family]
    return f"def f({arg}):\n    return {body.format(k=k)}\n"


def hidden_tests(family: str, k: int, rng: random.Random, n: int) -> str:
    """Source of a test file: ``n`` asserts on inputs drawn here, expected values from the reference function."""
    ns: dict = {}
    exec(reference_function(family, k), ns)  # our own reference, never model output
    kind = FAMILIES[family][3]
    if kind == "int":
        # k - 1, k + 1 and 2k tell k from its neighbours in every int family (max / min / divisibility included),
        # whatever k's size; the rest are drawn
        probes = [k - 1, k + 1, 2 * k][: max(0, n - 1)]
        inputs = [rng.randint(-20, 40) for _ in range(n - len(probes))] + probes
    else:
        inputs = [rng.choice(_WORDS) for _ in range(n)]
    lines = ["from solution import f", ""]
    for i, x in enumerate(inputs):
        lines += [f"def test_{i}():", f"    assert f({x!r}) == {ns['f'](x)!r}", ""]
    return "\n".join(lines)


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    family = rng.choice(sorted(FAMILIES))
    k = rng.randint(2, spec.code_max_constant)
    text, _, arg, _ = FAMILIES[family]
    q = f"Write a Python function f({arg}) that {text.format(k=k)}. Answer with one ```python block."
    code = reference_function(family, k)
    verifier = {"name": "unit_tests", "tests": {"test_hidden.py": hidden_tests(family, k, rng, spec.code_tests)},
                "solution_file": "solution.py", "time_limit_s": spec.sandbox_time_limit_s}
    return Example(prompt=(("user", q),), verifier=verifier, reasoning=f"f({arg}) = {FAMILIES[family][1].format(k=k)}",
                   content=f"```python\n{code}```")
