"""OpenAI-compatible chat-completions client: what vLLM serves at paper scale (``transformers serve`` locally).

- bounded concurrency: at most ``concurrency`` requests in flight (a thread pool);
- per-request timeout (``timeout_s``, connect and read);
- retries with exponential backoff and jitter on timeouts, dropped connections, HTTP 408/409/429/5xx; other HTTP
  errors fail at once. A request that still fails is returned as a ``Generation`` with ``error`` set (the harness
  does not cache it, so the next run retries it);
- every sampling knob sent explicitly: temperature, top_p, max_tokens, seed, ``chat_template_kwargs.enable_thinking``
  for the mode, and with ``extended_sampling`` (vLLM) top_k, min_p, repetition_penalty. Servers that refuse those
  fields (``transformers serve`` answers 422) run with ``extended_sampling=False``, which is then only allowed when
  the three knobs hold their neutral values (top_k -1, min_p 0, repetition 1.0), so nothing is silently dropped;
- reasoning kept apart: vLLM 0.32's reasoning parser returns ``message.reasoning`` (earlier vLLM and other servers
  ``message.reasoning_content``); either is stored in ``Generation.reasoning``. Token usage (prompt/completion
  tokens, and ``completion_tokens_details.reasoning_tokens`` where the server counts them) recorded per sample;
- ``serving``: the server-side settings that change outputs (dtype, max_model_len, reasoning parser, version ...),
  given by whoever started the server (``recipe.serve.vllm_server.VLLMServer.settings()``); ``describe()`` carries
  them, so they are part of the sample cache key (``recipe.eval.harness.generation_fingerprint``);
- a server that dies mid-run: a request that still fails after its retries triggers a health check; when the server
  does not answer it either, ``generate`` stops with ``EndpointUnavailable`` (in-flight requests abandon their
  retries) instead of spending the retries of every remaining request. Samples already yielded are cached by the
  harness, so re-running the same command resumes.
"""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Iterable, Iterator

import httpx

from recipe.eval.backends.backend_interface import Generation, Job
from recipe.eval.sampling_settings import SamplingParams

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The server answered something that is not a chat completion."""


class EndpointUnavailable(RuntimeError):
    """The server stopped answering (requests failed after their retries and its health check fails)."""


class OpenAIChatClient:
    name = "openai_chat"

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, concurrency: int = 8,
                 timeout_s: float = 600.0, max_retries: int = 4, backoff_s: float = 1.0, backoff_max_s: float = 60.0,
                 extended_sampling: bool = True, model_revision: str | None = None, serving: dict | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model = model
        self.model_revision = model_revision
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.extended_sampling = extended_sampling
        self.serving = dict(serving) if serving else None
        self._stop = threading.Event()
        self._reported: dict | None = None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s),
                                  limits=httpx.Limits(max_connections=concurrency))

    def describe(self) -> dict:
        return {"backend": self.name, "endpoint": self.base_url, "model": self.model,
                "model_revision": self.model_revision, "concurrency": self.concurrency, "timeout_s": self.timeout_s,
                "max_retries": self.max_retries, "extended_sampling": self.extended_sampling,
                "serving": self.serving_settings()}

    def serving_settings(self) -> dict | None:
        """The declared ``serving`` settings plus what the server reports about itself (vLLM: ``/version`` and the
        served model's ``max_model_len`` and ``root`` in ``/v1/models``), asked once; None when there is neither."""
        if self._reported is None:
            self._reported = {}
            try:
                r = self._http.get(self.base_url + "/models", timeout=10.0)
                entry = next((m for m in r.json().get("data", []) if m.get("id") == self.model), {})
                self._reported.update({k: entry[k] for k in ("max_model_len", "root") if entry.get(k) is not None})
                v = self._http.get(self.base_url.removesuffix("/v1") + "/version", timeout=10.0)
                if v.status_code == 200 and isinstance(v.json(), dict) and v.json().get("version"):
                    self._reported["server_version"] = v.json()["version"]
            except (httpx.HTTPError, ValueError, AttributeError):
                pass
        merged = {**(self.serving or {}), **{f"reported_{k}": v for k, v in self._reported.items()}}
        return merged or None

    def close(self) -> None:
        self._http.close()

    def health(self) -> bool:
        try:
            return self._http.get(self.base_url + "/models", timeout=5.0).status_code == 200
        except httpx.HTTPError:
            return False

    def request_body(self, messages: list[dict], sampling: SamplingParams, seed: int, tools: list | None = None) -> dict:
        if not self.extended_sampling and (sampling.top_k, sampling.min_p, sampling.repetition_penalty) != (-1, 0.0, 1.0):
            raise ValueError("this server takes only standard OpenAI sampling fields, but top_k/min_p/"
                             "repetition_penalty are set to non-neutral values; use a vLLM server (--server vllm)")
        body = {"model": self.model, "messages": messages, "temperature": sampling.temperature,
                "top_p": sampling.top_p, "max_tokens": sampling.max_tokens, "seed": seed, "n": 1, "stream": False,
                "chat_template_kwargs": {"enable_thinking": sampling.thinking}}
        if tools:
            body["tools"] = tools
        if self.extended_sampling:
            body.update(top_k=sampling.top_k, min_p=sampling.min_p, repetition_penalty=sampling.repetition_penalty)
        return body

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff_max_s, self.backoff_s * 2 ** attempt) * (0.5 + random.random() / 2)

    def chat(self, messages: list[dict], sampling: SamplingParams, seed: int = 0, tools: list | None = None) -> Generation:
        body = self.request_body(messages, sampling, seed, tools)
        last_error = ""
        t0 = time.monotonic()
        for attempt in range(self.max_retries + 1):
            try:
                r = self._http.post(self.base_url + "/chat/completions", json=body)
            except (httpx.TimeoutException, httpx.TransportError) as e:
                last_error = f"{type(e).__name__}: {e}"
            else:
                if r.status_code == 200:
                    try:
                        gen = parse_completion(r.json())
                    except (ValueError, EndpointError) as e:
                        return Generation("", error=f"bad_completion: {e}", attempts=attempt + 1)
                    gen.latency_s = round(time.monotonic() - t0, 3)
                    gen.attempts = attempt + 1
                    return gen
                last_error = f"HTTP {r.status_code}: {r.text[:300]}"
                if r.status_code not in RETRY_STATUS:
                    return Generation("", error=last_error, attempts=attempt + 1)
            if attempt < self.max_retries and self._stop.wait(self._backoff(attempt)):
                return Generation("", error=f"abandoned (the server is unavailable): {last_error}",
                                  attempts=attempt + 1)
        return Generation("", error=f"gave up after {self.max_retries + 1} attempts: {last_error}",
                          attempts=self.max_retries + 1)

    def stop_if_down(self, gen: Generation, resumes: str) -> None:
        """Raise ``EndpointUnavailable`` when ``gen`` failed after all its retries and the server does not answer its
        health check either: the run stops instead of spending every remaining request's retries. ``resumes`` says
        what a re-run of the same command keeps."""
        if gen.error and gen.error.startswith("gave up") and not self.health():
            raise EndpointUnavailable(f"{self.base_url} stopped answering: {gen.error}; its health check (GET "
                                      f"/v1/models) fails too, so the run stops here. Restart the server and re-run "
                                      f"the same command: {resumes}.")

    def generate(self, jobs: Iterable[Job], sampling: SamplingParams) -> Iterator[tuple[Job, Generation]]:
        jobs = list(jobs)
        if jobs:
            self.request_body(jobs[0].messages, sampling, 0)  # refuse unsendable settings before any request
        self._stop.clear()
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        futs = {pool.submit(self.chat, j.messages, sampling, j.seed, j.tools): j for j in jobs}
        try:
            for f in as_completed(futs):
                g = f.result()
                self.stop_if_down(g, "finished samples are cached and reused")
                yield futs[f], g
        finally:
            # in-flight requests give up instead of retrying, queued ones never start, and the caller is not held
            # until the requests in flight end (a 1280-token answer can take minutes): on an interrupt it goes on at
            # once, e.g. to stop the server it started, which ends those requests too
            self._stop.set()
            pool.shutdown(wait=False, cancel_futures=True)


def parse_completion(payload: dict) -> Generation:
    try:
        choice = payload["choices"][0]
        msg = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"no choices[0].message in {str(payload)[:200]}") from None
    reasoning = msg.get("reasoning")  # vLLM >= 0.10 (0.32 returns only this one)
    if reasoning is None:
        reasoning = msg.get("reasoning_content")  # earlier vLLM, SGLang, DeepSeek's API
    usage = payload.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    return Generation(content=msg.get("content") or "", reasoning=reasoning, finish_reason=choice.get("finish_reason"),
                      prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
                      reasoning_tokens=details.get("reasoning_tokens"))
