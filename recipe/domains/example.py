"""What a tiny domain is: a deterministic generator of (prompt record, reference answer) pairs.

A record follows the project's normalized format (``recipe/data/record.py``): ``id``, ``domain``, ``source``,
``messages`` (the prompt), ``mode``, ``verifier`` (graded by ``recipe.rewards``), ``tools``, ``metadata``,
``license``. The reference answer (``reasoning`` + ``content`` [+ ``tool_calls``]) is used only for SFT.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Optional

from recipe.config.schema import TinyDomainSpec


@dataclass(frozen=True)
class Example:
    prompt: tuple[tuple[str, str], ...]          # ((role, content), ...): the conversation before the answer
    verifier: dict
    reasoning: str
    content: str
    tool_calls: Optional[tuple] = None
    tools: Optional[tuple] = None
    metadata: dict = field(default_factory=dict, hash=False, compare=False)
    split_key: Optional[str] = None  # what train/validation disjointness is about (default: the prompt)
    # identity shared by domains drawn from one generator (a tiny SWE repository): held out across those domains
    shared_key: Optional[str] = None
    # the prompt as SFT trains on it, where it differs (a curriculum: a long-context document cut short, so that SFT
    # teaches the skill cheaply and RL meets the full prompt); held-out checks and RL use ``prompt``
    sft_prompt: Optional[tuple[tuple[str, str], ...]] = field(default=None, hash=False, compare=False)

    @property
    def key(self) -> str:
        if self.split_key is not None:
            return self.split_key
        return "\x1e".join(f"{r}:{c}" for r, c in self.prompt)


Generator = Callable[[random.Random, TinyDomainSpec], Example]

# Domains played as multi-turn tool episodes in the sandbox (``recipe.train.agentic_rollouts``), not one response per prompt:
# validation scores them by episodes, in non-thinking mode, and their generation cap is per turn.
AGENTIC_DOMAINS = frozenset({"swe_agentic"})
