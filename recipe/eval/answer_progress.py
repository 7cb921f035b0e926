"""A progress line for long evaluations run headless (``recipe compare-to-start --rows``: full IFEval on the CPU is
~20-30 minutes a model): every ``every_s`` seconds, and at the last answer, one line with the answers done, the
time so far, the decode rate and the share of answers that hit the token cap.

No estimate of the time left: a decode batch's short answers finish first and its long ones last, so the answers'
rate early on says little about the rest."""
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
        if now - self.last >= self.every_s or (self.total is not None and self.done >= self.total):
            self.last = now
            self.emit(self.line(now))

    def line(self, now: float) -> str:
        """``ifeval start_instruct: 128/541 answers, 6.5 min, 290 tokens/s, 41% at the cap``"""
        took = max(now - self.t0, 1e-9)
        of = f"/{self.total}" if self.total is not None else ""
        return (f"  {self.label}: {self.done}{of} answers, {took / 60:.1f} min, {self.tokens / took:.0f} tokens/s, "
                f"{100 * self.at_cap / self.done:.0f}% at the cap")
