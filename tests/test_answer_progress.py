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


def test_decode_steps_give_the_lines_between_a_batchs_answers_with_the_time_left_if_every_batch_ran_to_the_cap():
    clock, lines = Clock(), []
    p = AnswerProgress("ifeval x", emit=lines.append, every_s=60.0, clock=clock)
    p.begin(4)
    for t in range(1, 11):                  # batch 1 of 2, 10 tokens a minute apart... of a 40-token cap
        clock.t = 30.0 * t
        p.decode_step(1, 2, t, 40, 2)
    # a line every 60 s: at 60 s 2/40 tokens of batch 1, i.e. 1/40 of the work, so 39 minutes left
    assert lines[1] == "  ifeval x: batch 1/2, 2/40 tokens, 2 rows writing, 0/4 answers, 1.0 min, <= 39 min left"
    assert len(lines) == 1 + 5
    clock.t = 301.0
    p(None, Generation("a", finish_reason="stop", completion_tokens=10))   # answers while steps are reported:
    p(None, Generation("b", finish_reason="length", completion_tokens=40))  # no line until the last answer
    assert len(lines) == 6
    clock.t = 420.0
    p.decode_step(2, 2, 20, 40, 1)           # half of batch 2: 3/4 of the work in 7 min
    assert lines[-1].endswith("1 rows writing, 2/4 answers, 7.0 min, <= 2 min left")
    p(None, Generation("c", finish_reason="stop", completion_tokens=10))
    p(None, Generation("d", finish_reason="stop", completion_tokens=10))
    assert lines[-1].startswith("  ifeval x: 4/4 answers, 7.0 min")


def test_the_in_process_backend_reports_each_decode_step_with_its_batch(tmp_path):
    from _tiny_llama import tiny_llama
    from recipe.eval.backends.backend_interface import Job
    from recipe.eval.backends.hf import HFBackend
    model, tok = tiny_llama()
    backend = HFBackend(tmp_path, model=model, tokenizer=tok, batch_size=2)
    calls = []
    backend.on_decode_step = lambda *a: calls.append(a)
    jobs = [Job(f"q{i}", 0, [{"role": "user", "content": f"Add {i} and 2."}]) for i in range(3)]
    samp = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=6, thinking=False, k=1)
    out = list(backend.generate(jobs, samp))
    assert len(out) == 3 and calls
    assert {c[:2] for c in calls} <= {(1, 2), (2, 2)} and all(c[3] == 6 for c in calls)
    for b in (1, 2):
        steps = [c for c in calls if c[0] == b]
        assert [c[2] for c in steps] == list(range(1, len(steps) + 1))      # tokens written, one call a step
        assert all(1 <= c[4] <= (2 if b == 1 else 1) for c in steps)         # rows still writing
        assert [c[4] for c in steps] == sorted((c[4] for c in steps), reverse=True)
