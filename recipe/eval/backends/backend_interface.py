"""One interface for the two generation backends (in-process Hugging Face, OpenAI-compatible server).

A backend takes ``Job``s (one chat prompt, one sample index) and yields ``(job, Generation)`` pairs as they
finish, so the harness can append each sample to its cache at once (a killed run resumes from there).
``describe()`` is written into ``results.json``: which backend, which model, which revision or sha256.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator, Protocol

from recipe.eval.sampling_settings import SamplingParams


@dataclass(frozen=True)
class Job:
    item_id: str
    sample: int
    messages: list[dict] = field(hash=False, compare=False)
    seed: int = 0
    tools: list | None = field(default=None, hash=False, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample)


@dataclass
class Generation:
    """One sampled response. ``reasoning`` is None when the backend did not split reasoning from content (then
    ``content`` is the raw text, thinking included); ``finish_reason`` ``length`` = truncated at ``max_tokens``."""
    content: str
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None     # usage.completion_tokens_details.reasoning_tokens, when the server counts them
    error: str | None = None
    latency_s: float | None = None
    attempts: int = 1
    episode: dict | None = None   # an episode suite's sample: how the tool loop ended and what the tests said

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Generation":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})

    def response(self):
        """The response in the shape the verifiers read (``recipe.rewards.extract.parse_response``)."""
        if self.reasoning is None:
            return self.content
        return {"role": "assistant", "content": self.content, "reasoning_content": self.reasoning}


class Backend(Protocol):
    name: str

    def generate(self, jobs: Iterable[Job], sampling: SamplingParams) -> Iterator[tuple[Job, Generation]]:
        ...

    def describe(self) -> dict:
        ...
