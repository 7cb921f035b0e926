"""OUR checkers for the instruction ids of NeMo-Gym's IF-RL rows that neither reference package defines.

``count:lowercase_counting``, ``first_word:first_word_sent`` and ``last_word:last_word_answer`` come from AllenAI's
IF-RLVR training constraints (the IFBench paper's training set), which ship in neither ``lm-eval`` nor
``nvidia-ifbench``. They are written here from the constraints' wording and are the project's, not a reference's:
``recipe.rewards.reference_if`` marks them ``origin="ours"`` and refuses to load if a reference ever defines the
same id. Sentences are split with IFBench's own splitter (``ifbench.instructions_util.split_into_sentences``).
Each checker is ``fn(text, kwargs, prompt) -> bool`` with ``None`` kwargs already dropped.
"""
from __future__ import annotations

import re
from typing import Callable


def _lowercase_counting(text: str, kw: dict, prompt: str) -> bool:
    """"Use at most N words written all in lowercase letters." """
    return len(re.findall(r"\b[a-z]+\b", text)) <= int(kw["N"])


def _first_word_sent(text: str, kw: dict, prompt: str) -> bool:
    """"The first word of each sentence should be the word {first_word}." """
    from ifbench.instructions_util import split_into_sentences

    want = str(kw["first_word"]).strip().lower()
    sentences = split_into_sentences(text)
    if not sentences:
        return False
    for sentence in sentences:
        words = sentence.split()
        if not words or re.sub(r"[^\w]", "", words[0]).lower() != want:
            return False
    return True


def _last_word_answer(text: str, kw: dict, prompt: str) -> bool:
    """"The last word of your response should be the word {last_word}." """
    words = text.strip().split()
    return bool(words) and re.sub(r"[^\w]", "", words[-1]).lower() == str(kw["last_word"]).strip().lower()


OWN_CHECKERS: dict[str, Callable[[str, dict, str], bool]] = {
    "count:lowercase_counting": _lowercase_counting,
    "first_word:first_word_sent": _first_word_sent,
    "last_word:last_word_answer": _last_word_answer,
}
