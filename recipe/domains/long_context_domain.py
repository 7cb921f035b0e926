"""Tiny long-context QA (paper §4.6 in miniature): a long synthetic document with facts spread through filler text;
the question needs one fact or, for two-hop questions, two (a link "the friend of A is B" and B's code).

The document is sized by ``TinyDomainSpec.long_context_filler`` sentences so that its prompt is at least 4x the
longest prompt of any other tiny domain (tests/test_long_context_domain.py checks this with the chat template);
``model.architecture.max_position_embeddings`` in the tiny profile leaves room for it. The answer is one word in
``\\boxed{}``, graded by exact match on the normalised answer (verifier ``exact_match``); the paper's LLM judge
(NeMo-Gym ``equivalence_llm_judge``) is the paper-scale option (``reward: llm_judge``, cluster backend).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.base import Example

NAMES = ("ana", "ben", "cleo", "dan", "eva", "finn", "gus", "hana", "ivo", "jon", "kim", "lea", "max", "nia",
         "otto", "pia", "rex", "sam", "tess", "uma")
CODES = ("red", "blue", "gold", "jade", "mint", "rose", "ruby", "sand", "teal", "wine", "ash", "plum")
_SUBJ = ("the river", "the old road", "a small boat", "the north wind", "the market", "the green hill",
         "a quiet bird", "the long train", "the morning fog", "the stone bridge")
_VERB = ("moves", "rests", "waits", "turns", "shines", "fades", "grows", "sleeps")
_TAIL = ("near the town", "all day", "in the rain", "after noon", "by the lake", "at dawn", "under the trees")


def _filler(rng: random.Random) -> str:
    return f"{rng.choice(_SUBJ).capitalize()} {rng.choice(_VERB)} {rng.choice(_TAIL)}."


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    people = rng.sample(NAMES, spec.long_context_people)
    codes = {p: rng.choice(CODES) for p in people}
    a, b = rng.sample(people, 2)
    two_hop = rng.random() < 0.5
    facts = [f"The code of {p} is {codes[p]}." for p in people]
    if two_hop:
        facts.append(f"The friend of {a} is {b}.")
        question = f"What is the code of the friend of {a}?"
        answer = codes[b]
        reasoning = f"friend of {a} is {b}. code of {b} is {answer}."
    else:
        question = f"What is the code of {a}?"
        answer = codes[a]
        reasoning = f"code of {a} is {answer}."
    sentences = [_filler(rng) for _ in range(spec.long_context_filler)]
    for f in facts:  # facts spread at random positions through the filler
        sentences.insert(rng.randrange(len(sentences) + 1), f)
    doc = " ".join(sentences)
    q = f"Read the document.\n{doc}\nQuestion: {question} Put your answer inside \\boxed{{}}."
    return Example(prompt=(("user", q),), verifier={"name": "exact_match", "expected_answer": answer},
                   reasoning=reasoning, content=f"\\boxed{{{answer}}}",
                   metadata={"two_hop": two_hop})
