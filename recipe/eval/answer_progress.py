"""A progress line for long evaluations run headless (``recipe compare-to-start --rows``: full IFEval on two CPU
cores is 20-60 minutes a model, one decode batch 10-14 of them): every ``every_s`` seconds, and at the last answer,
one line with the answers done, the time so far, the decode rate and the share of answers that hit the token cap.

A decode batch's answers all arrive when the batch ends, so a backend that reports its decode steps
(``HFBackend.on_decode_step`` -> :meth:`AnswerProgress.decode_step`) gives the line between answers: the batch, the
tokens written of the cap, the rows still writing, and the time left if every batch ran to the cap (an upper
estimate: a batch ends early when all its rows finish; the answers' rate alone says little, since short answers
finish first and long ones last)."""
from __future__ import annotations

import time
from typing import Callable


class AnswerProgress:
    """``progress(job, generation)`` callback of ``recipe.eval.harness.generate_samples``, which first calls
    ``begin(to_generate, reused)`` (answers reused from the sample cache are not generated again)."""

    def __init__(self, label: str, total: int | None = None, emit: Callable[[str], None] = print, every_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.emit, self.every_s, self.clock = label, total, emit, every_s, clock
        self.t0 = self.last = clock()
        self.done = self.tokens = self.at_cap = 0
        self.steps = False   # a backend reports decode steps (decode_step): the lines between answers come from there

    def begin(self, to_generate: int, reused: int = 0) -> None:
        self.total, self.t0 = to_generate, self.clock()
        self.last = self.t0
        if to_generate:
            cached = f" ({reused} from the cache)" if reused else ""
            self.emit(f"  {self.label}: {to_generate} answers to generate{cached}")

    def __call__(self, job, generation) -> None:
        self.done += 1
        self.tokens += generation.completion_tokens or 0
        self.at_cap += generation.finish_reason == "length"
        now = self.clock()
        if (now - self.last >= self.every_s and not self.steps) or (self.total is not None and self.done >= self.total):
            self.last = now
            self.emit(self.line(now))

    def decode_step(self, batch: int, batches: int, tokens: int, cap: int, live: int) -> None:
        """``ifeval x: batch 2/5, 640/1280 tokens, 71 rows writing, 128/541 answers, 21.0 min, <= 46 min left``,
        at most once every ``every_s`` seconds."""
        self.steps = True
        now = self.clock()
        if now - self.last < self.every_s:
            return
        self.last = now
        took = now - self.t0
        share = (batch - 1 + tokens / max(cap, 1)) / max(batches, 1)
        left = took / share - took if share > 0 else float("nan")
        of = f"/{self.total}" if self.total is not None else ""
        self.emit(f"  {self.label}: batch {batch}/{batches}, {tokens}/{cap} tokens, {live} rows writing, "
                  f"{self.done}{of} answers, {took / 60:.1f} min, <= {left / 60:.0f} min left")

    def line(self, now: float) -> str:
        """``ifeval start_instruct: 128/541 answers, 6.5 min, 290 tokens/s, 41% at the cap``"""
        took = max(now - self.t0, 1e-9)
        of = f"/{self.total}" if self.total is not None else ""
        return (f"  {self.label}: {self.done}{of} answers, {took / 60:.1f} min, {self.tokens / took:.0f} tokens/s, "
                f"{100 * self.at_cap / self.done:.0f}% at the cap")
