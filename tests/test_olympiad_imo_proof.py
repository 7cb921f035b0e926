"""IMO-ProofBench: real CSVs and judge prompt, 0–7 grading with several samples, the
"any 0 → 0, else mean" rule beside the plain mean, stored grades, and the generate → verify → refine loop."""
from __future__ import annotations

import itertools
import re

import pytest

from recipe.config import load_config
from recipe.config.olympiad_section import ProofTTSBudget, ProofTTSSection
from recipe.eval.olympiad.imo.imo_proof import (JUDGE_FIELDS, aggregate, load_proofbench, parse_points, score_proofbench)
from recipe.eval.olympiad.judge_prompts import load_prompt
from recipe.eval.olympiad.imo.proof_tts import parse_rating, run_proof_tts


class ScriptedJudge:
    """Returns the given grades in turn (None → a reply without a <points> block)."""

    def __init__(self, grades):
        self.grades = itertools.cycle(grades)
        self.prompts = []

    def complete(self, messages, **sampling):
        self.prompts.append(messages[-1]["content"])
        g = next(self.grades)
        return "<think>hidden</think>analysis" if g is None else f"Reasoning...\n<points>{g} out of 7</points>\n<points>0 out of 7</points>"


@pytest.fixture(scope="module")
def bench(shared_dir):
    d = shared_dir / "fixtures/eval/imo_bench"
    return load_proofbench(d, "v2"), load_proofbench(d, "v1"), load_prompt(d / "prompts/nvidia_gym/proofbench_judge.yaml", JUDGE_FIELDS)


def test_versions_differ_only_in_advanced_022(bench):
    v2, v1, _ = bench
    assert len(v1) == len(v2) == 60
    diff = [a["Problem ID"] for a, b in zip(v1, v2) if a != b]
    assert diff == ["PB-Advanced-022"]


def test_points_parser_and_aggregations():
    assert parse_points("x <points>6 out of 7</points> then <points>7 out of 7</points>") == 6  # first block
    assert parse_points("<points>9 out of 7</points>") is None and parse_points("7/7") is None
    assert aggregate([7, 7, 0, 6], "zero_if_any_zero") == 0.0
    assert aggregate([7, 7, 1, 6], "zero_if_any_zero") == 5.25
    assert aggregate([7, 7, 0, 6], "mean") == 5.0
    assert aggregate([], "mean") is None
    with pytest.raises(ValueError):
        aggregate([1], "median")


def test_grading_stores_every_grade_and_applies_the_rule(bench):
    rows, _, prompt = bench
    ids = [r["Problem ID"] for r in rows[:2]]
    proofs = {ids[0]: "<think>plan</think>Full proof.", ids[1]: "<think>never finished"}
    seen = []
    for rule, expected in (("zero_if_any_zero", 0.0), ("mean", 5.0)):
        judge = ScriptedJudge([7, 7, 0, 6])
        res = score_proofbench(rows[:2], proofs, judge, prompt, samples=4, aggregation=rule, on_item=seen.append)
        first = res["items"][0]
        assert first["score"] == expected and [g["points"] for g in first["grades"]] == [7, 7, 0, 6]
        assert res["items"][1]["score"] == 0.0 and res["items"][1]["judge_calls"] == 0  # unterminated thinking
        assert res["judge_calls"] == 4 and len(judge.prompts) == 4
        assert first["proof"] == "Full proof."
        assert "Full proof." in judge.prompts[0] and rows[0]["Grading guidelines"].strip()[:40] in judge.prompts[0]
        assert res["score"] == pytest.approx(100 * (expected / 7 + 0) / 2) and res["n"] == 2
    assert len(seen) == 4  # every graded item reached the store callback


def test_invalid_grades_are_skipped_or_zero(bench):
    rows, _, prompt = bench
    pid = rows[0]["Problem ID"]
    skip = score_proofbench(rows[:1], {pid: "<think></think>P"}, ScriptedJudge([None, 7, 6]), prompt, samples=3,
                            aggregation="mean", invalid_grade="skip")
    assert skip["items"][0]["score"] == 6.5 and skip["invalid_grades"] == 1
    zero = score_proofbench(rows[:1], {pid: "<think></think>P"}, ScriptedJudge([None, 7, 6]), prompt, samples=3,
                            aggregation="zero_if_any_zero", invalid_grade="zero")
    assert zero["items"][0]["score"] == 0.0
    none = score_proofbench(rows[:1], {pid: "<think></think>P"}, ScriptedJudge([None]), prompt, samples=2,
                            aggregation="mean", invalid_grade="skip")
    assert none["ungraded"] == [pid] and none["n"] == 1 and none["score"] == 0.0  # ungraded: 0, counted


class ToyProver:
    """Generation → 'draft'; refinement → 'fixed'; verifier rates fixed proofs 1, drafts 0 or 0.5 alternately."""

    def __init__(self):
        self.kinds = []
        self._r = itertools.cycle(["0", "0.5"])

    def complete(self, messages, **sampling):
        text = messages[-1]["content"]
        assert sampling["top_p"] == 0.95
        if text.startswith("You are checking"):
            self.kinds.append("verify")
            proof = text.split("Proof:\n", 1)[1]
            return f"<think>x</think>review of {proof[:10]} \\boxed{{{'1' if 'fixed' in proof else next(self._r)}}}"
        if text.startswith("Here is a proof"):
            self.kinds.append("refine")
            lows = re.findall(r"rating ([\d.]+)", text)
            assert lows == sorted(lows)  # lowest-rated analyses first
            return "<think>y</think>fixed proof"
        self.kinds.append("generate")
        return "<think>z</think>draft proof"


def test_generate_verify_refine_loop():
    cfg = ProofTTSSection(generations=3, verifications=2, refine_top=2, analyses_per_refine=2, refined_per_proof=2,
                          max_rounds=3, stop_mean_score=0.99999, max_tokens=100)
    model, stored = ToyProver(), []
    out = run_proof_tts("Prove 1+1=2.", model, cfg, problem_id="PB-Basic-001", store=stored.append)
    # round 0: 3 drafts x 2 verifications; round 1: top 2 x 2 refinements (fixed, rated 1) → stop before round 2
    assert out["rounds"] == 1 and out["stopped_early"]
    assert out["calls"] == {"generate": 3, "verify": 14, "refine": 4}
    assert out["final_proof"] == "fixed proof" and out["final_rating"] == 1.0 and out["final_index"] == 3
    assert sum(r["kind"] == "proof" for r in stored) == 7 and sum(r["kind"] == "verification" for r in stored) == 14
    assert len(out["pool"]) == 7 and {p["parent"] for p in out["pool"][3:]} <= {0, 1, 2}


def test_reduced_budget_and_paper_values():
    cfg = ProofTTSSection(generations=3, verifications=1, refine_top=1, max_rounds=0, max_tokens=10,
                          reduced=ProofTTSBudget(generations=1, verifications=1, refine_top=1, max_rounds=0),
                          reduced_problems=["PB-Basic-001"])
    model = ToyProver()
    assert run_proof_tts("p", model, cfg, problem_id="PB-Basic-001")["calls"]["generate"] == 1
    assert run_proof_tts("p", model, cfg, problem_id="PB-Advanced-002")["calls"]["generate"] == 3
    paper = load_config("paper").olympiad
    assert (paper.proof_tts.generations, paper.proof_tts.verifications, paper.proof_tts.refine_top,
            paper.proof_tts.max_rounds) == (128, 64, 32, 8)
    assert paper.imo_proof.judge_samples == 64 and paper.imo_proof.aggregation == "zero_if_any_zero"
    assert "PB-Advanced-028" in paper.proof_tts.reduced_problems and len(paper.proof_tts.reduced_problems) == 41
    assert parse_rating("<think>\\boxed{1}</think> \\boxed{0.5}") == 0.5 and parse_rating("none") is None


def test_tts_run_stores_every_proof_then_grades_the_finals(bench, tmp_path):
    from recipe.eval.olympiad.imo.proof_tts import run_proofbench_tts
    rows, _, prompt = bench
    cfg = ProofTTSSection(generations=2, verifications=1, refine_top=1, analyses_per_refine=1, refined_per_proof=1,
                          max_rounds=1, max_tokens=10)
    finals = run_proofbench_tts(rows[:2], ToyProver(), cfg, tmp_path / "tts.jsonl")
    import json
    recs = [json.loads(x) for x in (tmp_path / "tts.jsonl").read_text().splitlines()]
    assert sum(r["kind"] == "proof" for r in recs) == 2 * 3 and sum(r["kind"] == "final" for r in recs) == 2
    assert finals == {rows[0]["Problem ID"]: "fixed proof", rows[1]["Problem ID"]: "fixed proof"}
    res = score_proofbench(rows[:2], finals, ScriptedJudge([7]), prompt, samples=2, aggregation="zero_if_any_zero",
                           thinking=False)
    assert res["score"] == 100.0 and res["n"] == 2
