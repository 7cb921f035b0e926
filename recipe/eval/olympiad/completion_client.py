"""The judge/model interface the olympiad scorers need: ``complete(messages, **sampling) -> str``.

Any object with that method works (tests use deterministic in-process judges). ``HarnessChat`` adapts the
evaluation harness's OpenAI-compatible client (``recipe.eval.backends.openai_client.OpenAIChatClient``: ``chat(messages,
sampling, seed) -> Generation``), which ``open_harness_chat`` opens on an endpoint (imported there, on first use);
a failed request raises ``JudgeError`` so it is recorded as a judge failure, never scored as a verdict; a server
that stopped answering (its health check fails too) raises ``EndpointUnavailable`` and the run stops.
"""
from __future__ import annotations

import itertools
import os
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
            if hasattr(self.client, "stop_if_down"):
                self.client.stop_if_down(gen, "what its output files already hold is kept")
            raise JudgeError(gen.error)
        return gen.content

    def describe(self) -> dict:
        d = self.client.describe() if hasattr(self.client, "describe") else {}
        return d | {"sampling": self.sampling.model_dump() if hasattr(self.sampling, "model_dump") else dict(self.sampling)}


def open_harness_chat(endpoint: str, model: str, sampling: dict, *, key_env: str | None = None,
                      server: str = "vllm", concurrency: int = 8) -> HarnessChat:
    """A ``HarnessChat`` on an OpenAI-compatible ``endpoint``: ``sampling`` holds SamplingParams fields, the API key is
    read from the environment variable ``key_env``; ``server="vllm"`` also sends top_k/min_p/repetition_penalty."""
    from recipe.eval.backends.openai_client import OpenAIChatClient
    from recipe.eval.sampling_settings import SamplingParams
    key = os.environ.get(key_env) if key_env else None
    client = OpenAIChatClient(endpoint, model, api_key=key, concurrency=concurrency,
                              extended_sampling=server == "vllm")
    return HarnessChat(client, SamplingParams(**sampling, thinking=True))


def require_answering(chat: HarnessChat) -> None:
    """Refuse to start a long loop on a server that does not answer ``GET /v1/models``."""
    from recipe.eval.backends.openai_client import EndpointUnavailable
    if not chat.client.health():
        raise EndpointUnavailable(f"{chat.client.base_url} does not answer (GET /v1/models failed): start the server "
                                  "(e.g. `vllm serve MODEL`) or check --endpoint")
