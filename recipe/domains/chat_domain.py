"""Tiny chat: helpfulness prompts with a hidden rubric (verifier ``chat_rubric``), judged pairwise in RLHF.

"Tell me about the {adjective} {word}." plus, for most prompts, one request: capitals, a list, double quotes, or keep it short.
Hidden rubric (``recipe.rewards.chat_rubric``): mentions the word (answers the question asked), the requested
format, at most 3 words when asked to keep it short, and no filler words.

The SFT references are of mixed quality, as real chat SFT data is: a share ``spec.chat_filler_rate`` of them open
with a filler word ("sure", "well", ...). RLHF with the judge has to remove it. Each prompt also carries a fixed
*baseline* response (``metadata.baseline``): the reference answer with a filler opening, meeting every rubric item
but "no filler". The validation metric is the win rate against these baselines (win 1, tie 0.5, loss 0).
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example
from recipe.rewards.chat_rubric import FILLER

ADJECTIVES = ("big", "small", "red", "fast", "old", "new", "warm", "calm")
REQUESTS = {"none": "", "upper": " Answer in capitals.", "list": " Use a list.", "quote": " Use quotes.",
            "brief": " Keep it short."}


def _answer(word: str, adj: str, request: str) -> str:
    if request == "brief":
        return f"{word} is {adj}"
    body = f"the {word} is {adj}"
    return {"upper": body.upper(), "list": f"- {body}", "quote": f'"{body}"'}.get(request, body)


def _with_filler(text: str, filler: str, request: str) -> str:
    f = filler.upper() if request == "upper" else filler
    if request == "list":
        return f"- {f}, {text[2:]}"
    if request == "quote":
        return f'"{f}, {text[1:]}'
    return f"{f}, {text}"


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    word = rng.choice(spec.if_words)
    adj = rng.choice(ADJECTIVES)
    request = rng.choice(tuple(REQUESTS))
    rubric = [{"check": "mentions", "word": word}]
    if request in ("upper", "list", "quote"):
        rubric.append({"check": "format", "style": request})
    if request == "brief":
        rubric.append({"check": "max_words", "n": 3})
    rubric.append({"check": "no_filler"})
    clean = _answer(word, adj, request)
    filler = rng.choice(FILLER[:4])
    content = _with_filler(clean, filler, request) if rng.random() < spec.chat_filler_rate else clean
    baseline = _with_filler(clean, filler, request)
    return Example(prompt=(("user", f"Tell me about the {adj} {word}.{REQUESTS[request]}"),),
                   verifier={"name": "chat_rubric", "rubric": rubric},
                   reasoning=f"{word} {adj}", content=content, metadata={"baseline": baseline})
