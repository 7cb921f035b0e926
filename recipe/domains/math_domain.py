"""Tiny math: add or subtract a one-digit number (a in [0, max_operand], b in [0, 9]); the answer goes in
``\\boxed{}`` and is graded by math-verify (verifier ``math``). One-digit second operands keep carries learnable
for a tiny model while leaving ~20 x max_operand distinct problems.

Mirrors the paper's math prompts, which end "Put your answer inside \\boxed{}" (RECIPE.md §2).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    a, b = rng.randint(0, spec.max_operand), rng.randint(0, 9)
    op = rng.choice("+-")
    ans = a + b if op == "+" else a - b
    q = f"What is {a}{op}{b}? Put your answer inside \\boxed{{}}."
    return Example(prompt=(("user", q),), verifier={"name": "math", "expected_answer": str(ans)},
                   reasoning=f"{a}{op}{b}={ans}", content=f"\\boxed{{{ans}}}")
