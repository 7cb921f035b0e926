"""Unfinished is not an answer, failed is not absent: a generation cut at the length limit before its reasoning
closed is no answer in every thinking mode but off; a failed request is scored 0 in the denominator and makes the
result incomplete, which every table and ``recipe eval report`` say (rows and responses written here)."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from recipe.cli import app
from recipe.eval.backends.backend_interface import Generation
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.harness import evaluate_suite
from recipe.eval.report.results_tables import format_results_table, paper_comparison
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.score_file import score_responses
from recipe.eval.thinking import unfinished

ROW = {"id": "p1", "problem": "What is 6 + 7?", "expected_answer": "13"}
MID_REASONING = "6 + 7 = \\boxed{13}. Wait, let me double-check that by counting up from 6"  # no tags: template opened


@pytest.mark.parametrize("flag, finish, expect", [
    (None, "length", True), (True, "length", True), (False, "length", False), (None, "stop", False),
    (None, None, False)])
def test_unfinished_rule(flag, finish, expect):
    assert unfinished(MID_REASONING, finish, flag) is expect
    assert unfinished("<think>done</think>\\boxed{13}", finish, flag) is False  # reasoning closed: an answer
    split = {"role": "assistant", "content": "\\boxed{13}", "reasoning_content": "6+7"}
    assert unfinished(split, finish, flag) is False  # the server's parser saw the reasoning close


def test_score_file_truncated_generation_is_no_answer_except_off(tmp_path):
    lines = [dict(ROW, response=MID_REASONING, finish_reason="length"),
             dict(ROW, response=MID_REASONING, finish_reason="length", thinking="off"),
             dict(ROW, response=MID_REASONING, finish_reason="stop"),
             dict(ROW, response="<think>6+7</think>\\boxed{13}", finish_reason="length")]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = score_responses("aime25", path, tmp_path / "out")  # --thinking auto
    items = [json.loads(x) for x in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    v = items[0]["samples"]
    assert [x["score"] for x in v] == [0.0, 1.0, 1.0, 1.0]
    assert v[0]["reason"] == "truncated" and v[0]["no_answer"] and v[0]["truncated"]
    assert s["truncation_rate"] == 75.0 and s["truncated_no_answer"] == 1 and s["score"] == 75.0


class FlakyBackend:
    """Answers correctly; the requests named in ``fail`` come back as errors."""
    name = "flaky"

    def __init__(self, fail=()):
        self.fail = set(fail)

    def describe(self):
        return {"backend": "flaky", "model": "m"}

    def generate(self, jobs, sampling):
        for j in jobs:
            if (j.item_id, j.sample) in self.fail:
                yield j, Generation("", error="timeout after 600 s")
            else:
                yield j, Generation("<think>x</think>\\boxed{13}", finish_reason="stop")


def test_failed_requests_count_in_the_denominator_until_resumed(tmp_path):
    rows = [dict(ROW, id=f"p{i}") for i in range(3)]
    samp = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=64, thinking=True, k=2)
    r = evaluate_suite(get_suite("aime25"), rows, FlakyBackend({("p0", 1), ("p2", 0), ("p2", 1)}), samp, tmp_path)
    # p2 had no sample at all: it stays in the mean at 0; p0 is 0.5
    assert r["n"] == 3 and r["score"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    assert r["complete"] is False and r["failed_samples"] == 3 and r["generation"]["failed_requests"] == 3
    items = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()}
    assert [v["reason"] for v in items["p2"]["samples"]] == ["request_failed"] * 2
    r2 = evaluate_suite(get_suite("aime25"), rows, FlakyBackend(), samp, tmp_path)  # resumed: only the 3 retried
    assert r2["complete"] is True and r2["score"] == 100.0 and r2["failed_samples"] == 0
    assert r2["generation"]["reused_from_cache"] == 3 and r2["generation"]["generated"] == 3


def _result(score, complete, failed=0):
    return {"suite": "aime25", "score": score, "stderr": 2.0, "n": 30, "k": 8, "complete": complete,
            "failed_samples": failed, "n_items_requested": 30,
            "settings": {"sampling": {"max_tokens": 131072, "temperature": 1.0, "top_p": 1.0, "thinking": True},
                         "judge": None, "source": {}}}


def test_incomplete_scores_are_marked_in_every_table_and_the_report(tmp_path):
    from rich.console import Console
    row = {r["benchmark"]: r for r in paper_comparison({"aime25": _result(80.0, False, 12)})}["aime25"]
    assert row["ours"]["incomplete"] == "incomplete: 12 failed request(s) scored 0"
    assert {r["benchmark"]: r for r in paper_comparison({"aime25": _result(80.0, True)})}["aime25"]["ours"]["incomplete"] is None
    con = Console(width=250, record=True)
    con.print(format_results_table({"aime25": _result(80.0, False, 12)}))
    assert "incomplete: 12 failed" in con.export_text()
    (tmp_path / "aime25").mkdir()
    (tmp_path / "aime25" / "results.json").write_text(json.dumps(_result(80.0, False, 12)))
    out = CliRunner().invoke(app, ["eval", "report", str(tmp_path)], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if "aime25" in x)
    assert "not comparable" in line and "incomplete" in line and "92.4" in line
