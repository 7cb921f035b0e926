"""Tiny MCQA: pick the largest/smallest of lettered numbers; answer ``\\boxed{LETTER}`` (verifier ``mcqa``),
the NeMo-Gym ``strict_single_letter_boxed`` format of the paper's STEM MCQA pool."""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    k = spec.mcqa_options
    values = rng.sample(range(spec.mcqa_max_value + 1), k)
    letters = "ABCDEF"[:k]
    which = rng.choice(("largest", "smallest"))
    best = max(values) if which == "largest" else min(values)
    letter = letters[values.index(best)]
    opts = " ".join(f"{l}) {v}" for l, v in zip(letters, values))
    q = f"Which is {which}? {opts}"
    return Example(prompt=(("user", q),),
                   verifier={"name": "mcqa", "expected_answer": letter,
                             "options": [{l: str(v)} for l, v in zip(letters, values)],
                             "grading_mode": "strict_single_letter_boxed"},
                   reasoning=f"{which} {best}", content=f"\\boxed{{{letter}}}")
