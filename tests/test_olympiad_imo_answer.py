"""IMO-AnswerBench: real CSVs (v1/v2/v2-pr18), the malformed v2 row, the NVIDIA judge prompt,
the Math-Verify pre-check, the verdict parser and avg@k ± SE, with a deterministic in-process judge."""
from __future__ import annotations

import dataclasses
import math
import re

import pytest

from recipe.eval.olympiad.completion_client import JudgeError
from recipe.eval.olympiad.imo.imo_answer import (JUDGE_FIELDS, MalformedBenchmark, load_answerbench, parse_judge_verdict,
                                             score_answerbench)
from recipe.eval.olympiad.judge_prompts import load_prompt


class RuleJudge:
    """Deterministic judge: 'Correct' when the gold answer's digits appear in the solution's last line."""

    def __init__(self, fail_on: str | None = None, garble: bool = False):
        self.calls = []
        self.fail_on, self.garble = fail_on, garble

    def complete(self, messages, **sampling):
        text = messages[-1]["content"]
        self.calls.append((text, sampling))
        sol = text.split("Model Solution:", 1)[1].split("Golden Answer:", 1)[0]
        gold = text.rsplit("Golden Answer:", 1)[1].strip()
        if self.fail_on and self.fail_on in sol:
            raise JudgeError("HTTP 503")
        if self.garble:
            return "<thinking>hmm</thinking> I think it is right."
        ok = re.sub(r"\D", "", gold) and re.sub(r"\D", "", gold) in re.sub(r"\D", "", sol.strip().splitlines()[-1])
        return f"<thinking>compare; \\boxed{{Incorrect}} would be wrong here</thinking>\n\\boxed{{{'Correct' if ok else 'Incorrect'}}}"


@pytest.fixture(scope="module")
def imo(shared_dir):
    return shared_dir / "fixtures/eval/imo_bench"


@pytest.fixture(scope="module")
def prompt(imo):
    return load_prompt(imo / "prompts/nvidia_gym/answerbench_autograder_judge.yaml", JUDGE_FIELDS)


def test_versions_and_the_malformed_v2_row(imo):
    v1, v2, fixed = (load_answerbench(imo, v) for v in ("v1", "v2", "v2-pr18"))
    assert (len(v1.rows), len(v2.rows), len(fixed.rows)) == (400, 399, 400)
    assert [m["id"] for m in v2.malformed] == ["imo-bench-algebra-036"] and not v1.malformed and not fixed.malformed
    assert any("category name" in r for r in v2.malformed[0]["reasons"])
    assert "imo-bench-algebra-036" not in {r["Problem ID"] for r in v2.rows}
    gold = {r["Problem ID"]: r["Short Answer"] for r in fixed.rows}["imo-bench-algebra-036"]
    assert gold == r"$Y(x)=A+\frac{B}{x}-x$"
    with pytest.raises(MalformedBenchmark, match="algebra-036"):
        load_answerbench(imo, "v2", on_malformed="error")
    with pytest.raises(ValueError, match="version"):
        load_answerbench(imo, "v3")
    changed = sum(a["Short Answer"] != b["Short Answer"] for a, b in zip(v1.rows, fixed.rows))
    assert changed == 16  # README: 16 answers differ between v1 and v2


def test_prompt_is_loaded_from_the_benchmark_file(prompt):
    assert prompt.fields == JUDGE_FIELDS
    msgs = prompt.messages(problem="P", predicted_answer="S", expected_answer="G")
    assert msgs[-1]["content"].endswith("Problem: P\nModel Solution: S\nGolden Answer: G")
    assert r"\boxed{Correct}" in msgs[-1]["content"]  # {{ }} escapes rendered
    with pytest.raises(KeyError):
        prompt.messages(problem="P")


def test_verdict_parser():
    assert parse_judge_verdict("<thinking>\\boxed{Correct}?</thinking>\n\\boxed{Incorrect}") is False
    assert parse_judge_verdict("<thinking>..</thinking>\\boxed{ Correct }") is True
    assert parse_judge_verdict("<thinking>\\boxed{Correct}</thinking> no verdict") is None
    assert parse_judge_verdict("\\boxed{Correct}") is True


def test_precheck_judge_and_avg_at_k(imo, prompt):
    bench = load_answerbench(imo, "v2")
    rows = {r["Problem ID"]: r for r in bench.rows}
    ids = [i for i in rows if rows[i]["Short Answer"].strip().strip("$").isdigit()][:3]
    assert len(ids) == 3
    g = {i: rows[i]["Short Answer"].strip().strip("$") for i in ids}
    responses = {
        # exact boxed answer: pre-check, no judge call; wrong answer written in words: the judge decides
        ids[0]: [f"<think>x</think>The answer is $\\boxed{{{g[ids[0]]}}}$.", f"<think>x</think>So it is {g[ids[0]]} in total"],
        # unterminated reasoning with a right box: no answer, no judge call; a wrong box: judge says Incorrect
        ids[1]: [f"<think>maybe \\boxed{{{g[ids[1]]}}}", "<think>x</think>\\boxed{-1}"],
        ids[2]: [f"<think>x</think>\\boxed{{{g[ids[2]]}}}", f"<think>x</think>\\boxed{{{g[ids[2]]}.0}}"],
    }
    judge = RuleJudge()
    bench = dataclasses.replace(bench, rows=[rows[i] for i in ids])  # a three-problem benchmark
    res = score_answerbench(bench, responses, judge, prompt, judge_sampling={"temperature": 1.0})
    per = {it["id"]: it["accuracy"] for it in res["items"]}
    assert per == {ids[0]: 1.0, ids[1]: 0.0, ids[2]: 1.0}
    assert res["grading"] == {"precheck": 3, "judge": 2, "judge_invalid": 0, "no_answer": 1, "bad_response": 0}
    assert len(judge.calls) == 2 and judge.calls[0][1] == {"temperature": 1.0}
    assert res["k"] == 2 and res["n"] == 3 and res["metric"] == "avg@2"
    assert res["accuracy"] == pytest.approx(200 / 3)
    assert res["se"] == pytest.approx(math.sqrt(((100 - 200 / 3) ** 2 * 2 + (200 / 3) ** 2) / 2 / 3))
    assert res["malformed_rows"][0]["id"] == "imo-bench-algebra-036"
    assert res["judge_prompt"]["sha256"] == prompt.sha256


def test_judge_failures_are_counted_not_verdicts(imo, prompt):
    bench = load_answerbench(imo, "v2-pr18")
    pid = bench.rows[0]["Problem ID"]
    res = score_answerbench(bench, {pid: ["<think></think>I give up"]}, RuleJudge(garble=True), prompt)
    assert res["grading"]["judge_invalid"] == 1 and res["accuracy"] == 0
    res = score_answerbench(bench, {pid: ["<think></think>boom"]}, RuleJudge(fail_on="boom"), prompt)
    assert res["items"][0]["samples"][0]["how"] == "judge_invalid" and "503" in res["items"][0]["samples"][0]["detail"]


def test_responses_for_the_malformed_row_are_excluded_and_reported(imo, prompt):
    bench = load_answerbench(imo, "v2")
    ok_id = bench.rows[0]["Problem ID"]
    res = score_answerbench(bench, {ok_id: ["<think></think>\\boxed{Algebra}"], "imo-bench-algebra-036": ["<think></think>\\boxed{Algebra}"]},
                            RuleJudge(), prompt)
    assert res["n"] == 399 and res["n_missing"] == 398 and res["excluded_malformed_with_responses"] == ["imo-bench-algebra-036"]
    with pytest.raises(ValueError, match="same number"):
        score_answerbench(bench, {ok_id: ["a", "b"], bench.rows[1]["Problem ID"]: ["a"]}, RuleJudge(), prompt)
    with pytest.raises(ValueError, match="not in"):
        score_answerbench(bench, {"nope": ["a"]}, RuleJudge(), prompt)
