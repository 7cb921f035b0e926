"""Tiny instruction following: IFEval-style verifiable constraints (verifier ``instruction_following``).

Each prompt asks to repeat a word N times, optionally with one formatting constraint. The checkers are the IFEval
ones with their kwargs: ``keywords:frequency`` (at least N), ``length_constraints:number_words`` (fewer than
N+1+extra words, so exactly N), plus ``startend:quotation``, ``startend:end_checker`` or
``detectable_format:title``. Graded strictly: every instruction must hold (IFEval "strict" prompt accuracy).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example

EXTRAS = ("none", "quote", "end", "title")


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    w = rng.choice(spec.if_words)
    n = rng.randint(1, 5)
    extra = rng.choice(EXTRAS)
    body = " ".join([w] * n)
    ids = ["keywords:frequency", "length_constraints:number_words"]
    extra_words = 0
    if extra == "none":
        q, answer = f"Write {w} {n} times.", body
        kw_extra = []
    elif extra == "quote":
        q, answer = f"Write {w} {n} times. Wrap it in double quotes.", f'"{body}"'
        ids.append("startend:quotation")
        kw_extra = [{}]
    elif extra == "end":
        q, answer = f"Write {w} {n} times. End with bye.", f"{body} bye"
        ids.append("startend:end_checker")
        kw_extra = [{"end_phrase": "bye"}]
        extra_words = 1
    else:
        q, answer = f"Write {w} {n} times. Add the title <<song>>.", f"<<song>> {body}"
        ids.append("detectable_format:title")
        kw_extra = [{}]
        extra_words = 1
    kwargs = [{"keyword": w, "frequency": n, "relation": "at least"},
              {"num_words": n + 1 + extra_words, "relation": "less than"}, *kw_extra]
    return Example(prompt=(("user", q),),
                   verifier={"name": "instruction_following", "instruction_id_list": ids, "kwargs": kwargs,
                             "grading_mode": "all"},
                   reasoning=f"{n} x {w}", content=answer)
