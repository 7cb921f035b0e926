"""Tiny long-context QA (paper §4.6 in miniature): a long synthetic document with facts spread through filler text;
the question needs one fact or, for two-hop questions, two (a link "the friend of A is B" and B's code).

Documents range in difficulty (``long_context_min_people``..``long_context_people`` facts; one fact: the only code
in the document, a one-hop question), as long-context suites range from one needle to many: the SFT model then
solves the easy end, so long-context RL has rewards to climb from, and the report split measures the whole range.

The document is sized by ``TinyDomainSpec.long_context_filler`` sentences so that its prompt is at least 4x the
longest prompt of any other tiny domain (tests/test_long_context_domain.py checks this with the chat template);
``model.architecture.max_position_embeddings`` in the tiny profile leaves room for it. The answer is one word in
``\\boxed{}``, graded by exact match on the normalised answer (verifier ``exact_match``); the paper's LLM judge
(NeMo-Gym ``equivalence_llm_judge``) is the paper-scale option (``reward: llm_judge``, cluster backend).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example

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
    n_people = spec.long_context_people
    if spec.long_context_min_people is not None:  # a range of difficulty: fewer facts, fewer distractors
        n_people = rng.randint(spec.long_context_min_people, spec.long_context_people)
    people = rng.sample(NAMES, n_people)
    codes = {p: rng.choice(CODES) for p in people}
    a, b = rng.sample(people, 2) if n_people > 1 else (people[0], people[0])
    two_hop = n_people > 1 and rng.random() < 0.5
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
    q = _prompt(rng, facts, spec.long_context_filler, question)
    sft_q = None if spec.long_context_sft_filler is None else _prompt(rng, facts, spec.long_context_sft_filler, question)
    return Example(prompt=(("user", q),), verifier={"name": "exact_match", "expected_answer": answer},
                   reasoning=reasoning, content=f"\\boxed{{{answer}}}",
                   metadata={"two_hop": two_hop}, sft_prompt=None if sft_q is None else (("user", sft_q),))


def _prompt(rng: random.Random, facts: list[str], filler: int, question: str) -> str:
    sentences = [_filler(rng) for _ in range(filler)]
    for f in facts:  # facts spread at random positions through the filler
        sentences.insert(rng.randrange(len(sentences) + 1), f)
    doc = " ".join(sentences)
    return f"Read the document.\n{doc}\nQuestion: {question} Put your answer inside \\boxed{{}}."
