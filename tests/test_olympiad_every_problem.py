"""Olympiad scores are over every problem of the benchmark (EVAL.md §4): a missing problem is 0, a proof no judge
reply could grade is 0 (the paper profile grades an invalid reply 0), and both are counted. Problems, proofs, answers
and the judge are written here."""
from __future__ import annotations

import pytest

from recipe.config import load_config
from recipe.eval.olympiad.completion_client import JudgeError
from recipe.eval.olympiad.imo.imo_answer import AnswerBench, score_answerbench
from recipe.eval.olympiad.imo.imo_proof import score_proofbench
from recipe.eval.olympiad.judge_prompts import PromptTemplate

PROOF_PROMPT = PromptTemplate("P: {problem}\nS: {reference_solution}\nG: {rubric}\nProof: {predicted_answer}", None,
                              "written here", "0")
ANSWER_PROMPT = PromptTemplate("Problem: {problem}\nModel Solution: {predicted_answer}\nGolden Answer: {expected_answer}",
                               None, "written here", "0")
PROOF_ROWS = [{"Problem ID": f"PB-Basic-00{i}", "Problem": f"Show that {i} + {i} is even.",
               "Solution": f"{i} + {i} = 2 * {i}.", "Grading guidelines": "7 for the identity."} for i in range(1, 5)]


class ProofJudge:
    """7 points for a proof that says 'good'; a failed request for 'judge-fails'; a reply without points otherwise."""

    def complete(self, messages, **sampling):
        proof = messages[-1]["content"].split("Proof: ", 1)[1]
        if "good" in proof:
            return "Fine.\n<points>7 out of 7</points>"
        if "judge-fails" in proof:
            raise JudgeError("HTTP 503")
        return "I cannot decide."


PROOFS = {"PB-Basic-001": "<think>x</think>A good proof.", "PB-Basic-002": "<think>x</think>judge-fails here",
          "PB-Basic-003": "<think>x</think>A proof the judge gives no points."}  # PB-Basic-004: no proof at all


def test_paper_profile_grades_an_invalid_reply_zero():
    c = load_config("paper").olympiad.imo_proof
    assert c.invalid_grade == "zero" and c.aggregation == "zero_if_any_zero"


@pytest.mark.parametrize("invalid_grade", ["zero", "skip"])
def test_proofbench_counts_every_problem(invalid_grade):
    res = score_proofbench(PROOF_ROWS, PROOFS, ProofJudge(), PROOF_PROMPT, samples=2, aggregation="zero_if_any_zero",
                           invalid_grade=invalid_grade)
    # one proof at 7/7 of four problems: 25, not 100 over the one that was graded
    assert res["score"] == 25.0 and res["n"] == 4 and res["points_mean"] == 7 / 4
    assert res["missing_problems"] == ["PB-Basic-004"] and res["n_missing"] == 1
    assert res["invalid_grades"] == 4 and res["proofs_with_invalid_grades"] == 2
    by_id = {it["id"]: it for it in res["items"]}
    assert [by_id[i]["score"] for i in sorted(by_id)] == [7.0, 0.0, 0.0, 0.0]
    if invalid_grade == "skip":  # nothing graded the two proofs: 0 each, listed
        assert res["ungraded"] == ["PB-Basic-002", "PB-Basic-003"] and res["n_ungraded"] == 2
    else:  # each invalid reply is a 0 grade
        assert res["n_ungraded"] == 0 and [g["points"] for g in by_id["PB-Basic-003"]["grades"]] == [None, None]


class AnswerJudge:
    def complete(self, messages, **sampling):
        return "<thinking>no</thinking>\\boxed{Incorrect}"


def test_answerbench_averages_over_every_problem():
    rows = [{"Problem ID": f"imo-bench-algebra-90{i}", "Problem": f"Find {i} + 1.", "Short Answer": str(i + 1),
             "Category": "Algebra", "Subcategory": "x", "Source": "written here"} for i in range(3)]
    bench = AnswerBench("v2", "written here", rows)
    responses = {rows[0]["Problem ID"]: ["<think>x</think>\\boxed{1}", "<think>x</think>\\boxed{1}"],
                 rows[1]["Problem ID"]: ["<think>x</think>\\boxed{2}", "<think>x</think>\\boxed{7}"]}
    res = score_answerbench(bench, responses, AnswerJudge(), ANSWER_PROMPT)
    assert res["accuracy"] == pytest.approx(100 * (1 + 0.5 + 0) / 3) and res["n"] == 3 and res["k"] == 2
    assert res["missing_problems"] == [rows[2]["Problem ID"]] and res["n_missing"] == 1
    assert res["by_category"]["Algebra"]["n"] == 3
    assert [it["accuracy"] for it in res["items"]] == [1.0, 0.5, 0.0] and res["items"][2]["missing"]


def _imo_folder(tmp_path):
    import csv
    d = tmp_path / "imo"
    d.mkdir()
    with open(d / "proofbench_v2.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["Problem ID", "Problem", "Solution", "Grading guidelines", "Category",
                                          "Level", "Short Answer", "Source"])
        w.writeheader()
        for r in PROOF_ROWS[:2]:
            w.writerow(dict(r, Category="Algebra", Level="Basic", **{"Short Answer": "-", "Source": "here"}))
    with open(d / "answerbench_v2.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["Problem ID", "Problem", "Short Answer", "Category", "Subcategory", "Source"])
        w.writeheader()
        w.writerow({"Problem ID": "imo-bench-algebra-901", "Problem": "Find 1 + 1.", "Short Answer": "2",
                    "Category": "Algebra", "Subcategory": "x", "Source": "here"})
    (d / "judge.txt").write_text(PROOF_PROMPT.user + "\n" + ANSWER_PROMPT.user)
    return d


def test_rescoring_a_truncated_generation_is_no_answer(tmp_path):
    import json

    from recipe.eval.olympiad.score_suites import ScoreOptions, run_score
    d = _imo_folder(tmp_path)
    cut = "1 + 1 = \\boxed{2}, so the claim follows. Wait, let me double-check"  # template opened <think>: no tags
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"Problem ID": "imo-bench-algebra-901", "response": cut, "finish_reason": "length"})
                    + "\n" + json.dumps({"Problem ID": "imo-bench-algebra-901", "response": cut, "finish_reason": "stop"})
                    + "\n")
    args = ScoreOptions(data=str(d), judge_prompt=str(d / "judge.txt"), profile="tiny")
    res = run_score("imo-answer", args, out=tmp_path / "a", responses=resp)
    assert res["accuracy"] == 50.0 and res["grading"]["no_answer"] == 1 and res["grading"]["precheck"] == 1
    proofs = tmp_path / "p.jsonl"
    proofs.write_text(json.dumps({"Problem ID": "PB-Basic-001", "response": "A good proof. Wait", "finish_reason": "length"})
                      + "\n")
    res = run_score("imo-proof", args, out=tmp_path / "p", responses=proofs)  # no judge call: no server needed
    assert res["score"] == 0.0 and res["n"] == 2 and res["judge_calls"] == 0 and res["n_missing"] == 1
