"""The headless progress line of long evaluations: answers done out of those to generate (cached ones left out),
time so far, decode rate and the share at the token cap, at most once a period and at the last answer."""
from __future__ import annotations

from recipe.eval.answer_progress import AnswerProgress
from recipe.eval.backends.backend_interface import Generation
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.harness import evaluate_suite
from recipe.eval.sampling_settings import SamplingParams

ROWS = [{"id": f"p{i}", "problem": "What is 6 + 7?", "expected_answer": "13"} for i in range(5)]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class TimedBackend:
    """Each answer takes 30 s on ``clock``: 600 tokens; every second one stops at the length cap."""
    name = "timed"

    def __init__(self, clock):
        self.clock = clock

    def describe(self):
        return {"backend": "timed", "model": "m"}

    def generate(self, jobs, sampling):
        for i, j in enumerate(jobs):
            self.clock.t += 30.0
            yield j, Generation("\\boxed{13}", finish_reason="length" if i % 2 else "stop", completion_tokens=600)


def test_lines_once_a_minute_and_at_the_last_answer_counting_only_what_is_generated(tmp_path):
    samp = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=16, thinking=False, k=1)
    clock, lines = Clock(), []
    evaluate_suite(get_suite("aime25"), ROWS[:2], TimedBackend(clock), samp, tmp_path)  # 2 answers now cached
    clock.t = 0.0
    progress = AnswerProgress("aime25 start", emit=lines.append, every_s=60.0, clock=clock)
    evaluate_suite(get_suite("aime25"), ROWS, TimedBackend(clock), samp, tmp_path, progress=progress)
    assert lines[0] == "  aime25 start: 3 answers to generate (2 from the cache)"
    # answers at 30, 60 and 90 s: a line at 60 s (a minute since the start) and one at the last answer
    assert lines[1:] == ["  aime25 start: 2/3 answers, 1.0 min, 20 tokens/s, 50% at the cap",
                         "  aime25 start: 3/3 answers, 1.5 min, 20 tokens/s, 33% at the cap"]


def test_the_rate_is_tokens_over_the_time_so_far():
    clock, lines = Clock(), []
    p = AnswerProgress("ifeval x", total=2, emit=lines.append, clock=clock)
    clock.t = 10.0
    p(None, Generation("a", finish_reason="stop", completion_tokens=300))
    clock.t = 20.0
    p(None, Generation("b", finish_reason="length", completion_tokens=500))
    assert lines == ["  ifeval x: 2/2 answers, 0.3 min, 40 tokens/s, 50% at the cap"]
