"""The judge/model interface the olympiad scorers need: ``complete(messages, **sampling) -> str``.

Any object with that method works (tests use deterministic in-process judges). ``HarnessChat`` adapts the
evaluation harness's OpenAI-compatible client (``recipe.eval.backends.openai_client.OpenAIChatClient``: ``chat(messages,
sampling, seed) -> Generation``) without importing it here; a failed request raises ``JudgeError`` so it is
recorded as a judge failure, never scored as a verdict.
"""
from __future__ import annotations

import itertools
from typing import Any, Protocol


class JudgeError(RuntimeError):
    """The judge/model did not return a usable completion."""


class ChatModel(Protocol):
    def complete(self, messages: list[dict], **sampling: Any) -> str: ...


class HarnessChat:
    """``complete`` on top of a harness client; each call gets the next seed so samples differ."""

    def __init__(self, client: Any, sampling: Any, seed: int = 0):
        self.client = client
        self.sampling = sampling
        self._seeds = itertools.count(seed)

    def complete(self, messages: list[dict], **overrides: Any) -> str:
        sampling = self.sampling.model_copy(update=overrides) if overrides else self.sampling
        gen = self.client.chat(messages, sampling, seed=next(self._seeds))
        if getattr(gen, "error", None):
            raise JudgeError(gen.error)
        return gen.content

    def describe(self) -> dict:
        d = self.client.describe() if hasattr(self.client, "describe") else {}
        return d | {"sampling": self.sampling.model_dump() if hasattr(self.sampling, "model_dump") else dict(self.sampling)}
