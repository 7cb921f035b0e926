"""The rows of ``recipe compare-to-start --rows`` (recipe.pipeline.before_after_rows), from per-item verdicts written
here: IFEval's four metrics and the card's mean, each with CI and n, the paired delta against the start model, the
tiny suites' score, and the completions file with per-instruction verdicts."""
from __future__ import annotations

import pytest

from recipe.pipeline.before_after_rows import IF_METRICS, if_item_values, ifeval_samples, score_item_values, suite_rows

FIELDS = {"suite", "metric", "model", "stage", "score", "ci", "n", "delta", "delta_ci", "decoding"}


def _item(iid, strict, loose, response="ok"):
    return {"id": iid, "mean_score": float(all(strict)),
            "samples": [{"prompt_strict": all(strict), "prompt_loose": all(loose), "follow_strict": strict,
                         "follow_loose": loose, "instruction_id_list": [f"x:{i}" for i in range(len(strict))]}],
            "responses": [{"content": response, "reasoning": None}]}


BEFORE = [_item("a", [True, False, False], [True, True, False]), _item("b", [False], [True]),
          _item("c", [True, True], [True, True]), _item("d", [False, False], [False, True])]
AFTER = [_item("a", [True, True, True], [True, True, True]), _item("b", [True], [True]),
         _item("c", [True, True], [True, True]), _item("d", [True, False], [True, True])]


def _metric(rows, m):
    return next(r for r in rows if r["metric"] == m)


def test_the_four_ifeval_metrics_and_the_card_mean():
    rows = suite_rows("ifeval", "start_instruct", None, "greedy", if_item_values(BEFORE), None)
    assert [r["metric"] for r in rows] == list(IF_METRICS)
    assert all(set(r) == FIELDS and r["n"] == 4 and r["delta"] is None for r in rows)
    assert _metric(rows, "prompt_strict")["score"] == 25.0           # c only
    assert _metric(rows, "prompt_loose")["score"] == 50.0            # b, c
    assert _metric(rows, "inst_strict")["score"] == pytest.approx(100 * 3 / 8, abs=0.01)  # 3 of 8 instructions
    assert _metric(rows, "inst_loose")["score"] == pytest.approx(100 * 6 / 8, abs=0.01)
    assert _metric(rows, "card")["score"] == pytest.approx((25.0 + 37.5) / 2, abs=0.01)
    for r in rows:
        assert r["ci"][0] <= r["score"] <= r["ci"][1] and 0 <= r["ci"][0] and r["ci"][1] <= 100


def test_paired_delta_against_the_start_and_against_if_rl():
    start = if_item_values(BEFORE)
    rows = suite_rows("ifeval", "checkpoint", "if_rl", "greedy", if_item_values(AFTER), start)
    ps = _metric(rows, "prompt_strict")
    assert ps["delta"] == 50.0 and ps["delta_ci"][0] <= 50.0 <= ps["delta_ci"][1]  # 25 -> 75
    assert _metric(rows, "inst_strict")["delta"] == pytest.approx(100 * (7 - 3) / 8, abs=0.01)
    later = suite_rows("ifeval", "checkpoint", "rlhf", "greedy", if_item_values(BEFORE), start,
                       if_item_values(AFTER))
    assert _metric(later, "prompt_strict")["vs_if_rl"]["delta"] == -50.0
    assert _metric(later, "prompt_strict")["delta"] == 0.0


def test_a_tiny_suite_has_one_score_row():
    rows = suite_rows("tiny_math", "checkpoint", "sft", "sample", score_item_values(AFTER),
                      score_item_values(BEFORE))
    assert len(rows) == 1 and rows[0]["metric"] == "score" and set(rows[0]) == FIELDS
    assert rows[0]["score"] == 75.0 and rows[0]["delta"] == 50.0 and rows[0]["decoding"] == "sample"


def test_completions_carry_the_prompt_key_response_and_verdicts():
    rows = {"a": {"key": "a", "prompt": "Write.", "kwargs": [{}, {}, {}]}}
    out = ifeval_samples(AFTER[:1], rows, thinking=False)
    assert out == [{"key": "a", "prompt": "Write.", "response": "ok", "answer": "ok", "reasoning": None,
                    "instruction_id_list": ["x:0", "x:1", "x:2"], "kwargs": [{}, {}, {}],
                    "follow_strict": [True, True, True], "follow_loose": [True, True, True],
                    "prompt_strict": True, "prompt_loose": True}]
    think = [{**AFTER[0], "responses": [{"content": "plan</think>\nok", "reasoning": None}]},
             {**AFTER[1], "responses": [{"content": "never closed", "reasoning": None}]}]
    assert [s["answer"] for s in ifeval_samples(think, rows, thinking=True)] == ["ok", None]


def test_the_printed_table_names_every_row_and_the_unavailable_suites():
    from rich.console import Console

    from recipe.pipeline.before_after_rows import print_rows
    start = if_item_values(BEFORE)
    rows = (suite_rows("ifeval", "start_instruct", None, "greedy", start, None)
            + suite_rows("ifeval", "checkpoint", "if_rl", "greedy", if_item_values(AFTER), start))
    console = Console(record=True, width=200)
    print_rows({"start": "smol", "rows": rows, "unavailable": [{"suite": "ifbench", "model": "checkpoint",
                                                                "stage": "sft", "reason": "no mirror"}]}, console)
    text = console.export_text()
    assert text.count("prompt_strict") == 2 and "if_rl" in text and "+50.0 [" in text
    assert "unavailable: no mirror" in text
