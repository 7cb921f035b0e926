"""Aggregates (avg@k ± SE, unbiased pass@k, bootstrap CI) against hand-computed values, and the vLLM completion
shape: reasoning kept apart from the content and never graded."""
from __future__ import annotations

import math

import pytest

from recipe.eval.backends.openai_client import EndpointError, parse_completion
from recipe.eval.metrics import avg_at_k, bootstrap_ci, pass_at_k, pass_at_ks


def test_pass_at_k_matches_the_combinatorial_formula():
    assert pass_at_k(4, 0, 2) == 0.0 and pass_at_k(4, 4, 1) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
    assert pass_at_ks([[1, 0, 0, 0], [0, 0, 0, 0]]) == {"pass@1": 12.5, "pass@2": 25.0, "pass@4": 50.0}


def test_avg_at_k_with_standard_errors():
    r = avg_at_k([[1, 1], [0, 1], [0, 0]])  # item means 1, .5, 0
    assert r["score"] == pytest.approx(50.0) and r["n"] == 3 and r["k"] == 2
    assert r["stderr"] == pytest.approx(100 * 0.5 / math.sqrt(3), abs=1e-3)  # sd of (1, .5, 0) = .5
    assert r["stderr_across_runs"] == pytest.approx(100 * math.sqrt(((1 / 3 - .5) ** 2 + (2 / 3 - .5) ** 2)) / math.sqrt(2),
                                                    abs=1e-3)
    assert r["ci95"][0] < 50 < r["ci95"][1]


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    vals = [0.0] * 30 + [1.0] * 70
    lo, hi = bootstrap_ci(vals, n_boot=500, seed=1)
    assert (lo, hi) == tuple(bootstrap_ci(vals, n_boot=500, seed=1)) and lo < 0.7 < hi and hi - lo < 0.25


def test_vllm_reasoning_parser_output_is_kept_apart():
    g = parse_completion({"choices": [{"finish_reason": "stop", "message": {
        "role": "assistant", "content": "\\boxed{70}", "reasoning_content": "so maybe \\boxed{3}"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 40}})
    assert g.reasoning == "so maybe \\boxed{3}" and g.content == "\\boxed{70}" and g.completion_tokens == 40
    from recipe.eval.benchmarks.suite_registry import get_suite
    row = {"id": "x", "problem": "p", "expected_answer": "70"}
    assert get_suite("aime25").score(row, g.response(), True)["score"] == 1.0
    truncated = parse_completion({"choices": [{"finish_reason": "length", "message": {
        "content": None, "reasoning_content": "still thinking \\boxed{70}"}}]})
    v = get_suite("aime25").score(row, truncated.response(), True)
    assert truncated.finish_reason == "length" and v["score"] == 0.0 and v["no_answer"]
    with pytest.raises(EndpointError):
        parse_completion({"error": "x"})
