"""Tiny math: integer addition/subtraction, answer in ``\\boxed{}`` graded by math-verify (verifier ``math``).

Mirrors the paper's math prompts, which end "Put your answer inside \\boxed{}" (RECIPE.md §2).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.base import Example


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    a, b = rng.randint(0, spec.max_operand), rng.randint(0, spec.max_operand)
    op = rng.choice("+-")
    ans = a + b if op == "+" else a - b
    q = f"What is {a}{op}{b}? Put your answer inside \\boxed{{}}."
    return Example(prompt=(("user", q),), verifier={"name": "math", "expected_answer": str(ans)},
                   reasoning=f"{a}{op}{b}={ans}", content=f"\\boxed{{{ans}}}")
