"""verify_batch: bad input never breaks a batch, counts reconcile, pool and Ray paths agree."""
from __future__ import annotations


import pytest

from recipe.rewards import VerifierResult, verify, verify_batch


def rec(name, **fields):
    return {"id": name, "verifier": {"name": name, **fields}}


GOOD_MATH = rec("math", expected_answer="2")
IF_REC = rec("instruction_following", instruction_id_list=["punctuation:no_comma"], kwargs=[{}])

BAD_CASES = [
    (GOOD_MATH, None, "bad_response"),
    (GOOD_MATH, 42, "bad_response"),
    (GOOD_MATH, b"\\boxed{2}", "bad_response"),
    (GOOD_MATH, {"content": ["\\boxed{2}", 7]}, "bad_response"),
    (GOOD_MATH, {"output": [{"type": "mystery"}]}, "bad_response"),
    (GOOD_MATH, "no box at all", "no_answer"),
    (GOOD_MATH, "\\boxed{\\frac{1}{}", "no_answer"),  # unbalanced braces: nothing extracted
    (GOOD_MATH, "\\boxed{)(}", "wrong_answer"),  # extracted but unparseable
    (GOOD_MATH, "\\boxed{" * 500, "no_answer"),
    (rec("math", expected_answer=""), "\\boxed{2}", "invalid_field:expected_answer"),
    (rec("math", expected_answer=["2"]), "\\boxed{2}", "invalid_field:expected_answer"),
    (rec("math"), "\\boxed{2}", "missing_field:expected_answer"),
    (rec("mcqa", expected_answer="B", options="ABCD"), "B", "invalid_field:options"),
    (rec("instruction_following", kwargs=[{}]), "x", "missing_field:instruction_id_list"),
    (rec("instruction_following", instruction_id_list="punctuation:no_comma"), "x", "invalid_field:instruction_id_list"),
    (rec("structured_output", schema_str="{not json"), "{}", "invalid_field:schema_str"),
    (rec("structured_output", schema_str='{"type": "object"}'), "{unparseable", "parse_error"),
    (rec("structured_output"), "{}", "missing_field:schema_str"),
    (rec("tool_call", expected_calls="f(x)"), "<tool_call>", "invalid_field:expected_calls"),
    (rec("tool_call"), "x", "missing_field:expected_calls"),
    (rec("code", tests=[]), "```python\nprint(1)\n```", "invalid_field:tests"),
    ({"id": "no verifier"}, "x", "missing_field:verifier"),
    ({"verifier": "math"}, "x", "invalid_field:verifier"),
    ({"verifier": {}}, "x", "missing_field:verifier.name"),
    ("not a record", "x", "bad_record"),
    (None, "x", "bad_record"),
]


@pytest.mark.parametrize("record,response,reason", BAD_CASES)
def test_bad_input_scores_zero_with_a_reason(record, response, reason):
    r = verify(record, response)
    assert isinstance(r, VerifierResult) and r.score == 0.0 and r.reason == reason, r


def test_a_batch_of_bad_and_good_inputs_reconciles():
    records = [c[0] for c in BAD_CASES] + [GOOD_MATH, IF_REC]
    responses = [c[1] for c in BAD_CASES] + ["\\boxed{2}", "fine text"]
    out = verify_batch(records, responses)
    assert len(out) == len(records)  # scored == given
    assert [r.reason for r in out[: len(BAD_CASES)]] == [c[2] for c in BAD_CASES]
    assert [r.score for r in out[-2:]] == [1.0, 1.0]


def test_mismatched_lengths_is_a_caller_error():
    with pytest.raises(ValueError, match="one response per record"):
        verify_batch([GOOD_MATH], [])


def test_a_checker_bug_is_contained(monkeypatch):
    from dataclasses import replace

    from recipe.rewards.reference_if import registry

    def boom(kw, prompt):
        def check(text):
            raise RuntimeError("checker bug")
        return check

    monkeypatch.setitem(registry(), "punctuation:no_comma", replace(registry()["punctuation:no_comma"], build=boom))
    out = verify_batch([IF_REC, GOOD_MATH], ["text", "\\boxed{2}"])
    assert out[0].score == 0.0 and out[0].reason == "error:RuntimeError" and out[1].score == 1.0


def _mixed(n):
    recs, resps = [], []
    for i in range(n):
        recs.append(rec("math", expected_answer=str(i % 7)))
        resps.append(f"\\boxed{{{i % 5}}}" if i % 3 else None)
    return recs, resps


def test_worker_pool_matches_in_process():
    recs, resps = _mixed(60)
    inproc = verify_batch(recs, resps)
    pooled = verify_batch(recs, resps, workers=2, chunk_size=8)
    assert [(r.score, r.reason) for r in pooled] == [(r.score, r.reason) for r in inproc]
    assert sum(r.score for r in inproc) == sum(1 for i in range(60) if i % 3 and i % 5 == i % 7)


def test_ray_tasks_match_in_process():
    import ray  # a hard dependency (pyproject): its absence is a failure, not a skip
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        recs, resps = _mixed(40)
        out = verify_batch(recs, resps, ray_address="auto", chunk_size=10)
        assert [(r.score, r.reason) for r in out] == [(r.score, r.reason) for r in verify_batch(recs, resps)]
    finally:
        ray.shutdown()


def test_repeated_math_rows_all_verify():
    recs = [rec("math", expected_answer="\\frac{1}{2}")] * 50
    out = verify_batch(recs, ["\\boxed{0.5}"] * 50)
    assert [(r.score, r.reason) for r in out] == [(1.0, "correct")] * 50
