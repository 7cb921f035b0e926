"""``recipe eval prove``: IMO-ProofBench proofs by generate -> verify -> refine against a loopback OpenAI-compatible
server, the final proofs graded by ``recipe eval score --suite imo-proof``, and a cut-off run resumed. The benchmark
and judge prompt are files written here, in the layout of IMO-Bench."""
from __future__ import annotations

import csv
import json
import re

import pytest
from typer.testing import CliRunner

from _loopback_chat import loopback_chat
from recipe.cli import app

runner = CliRunner()
PROBLEMS = {"PB-Basic-001": "Prove that 1 + 1 = 2.", "PB-Basic-002": "Prove that 2 + 2 = 4.",
            "PB-Advanced-001": "Prove that there are infinitely many primes."}


def _prove_or_grade(body: dict) -> str:
    """Drafts are rated 0, refinements ("fixed proof") 1; the grader gives a fixed proof 7 points, anything else 0."""
    text = body["messages"][-1]["content"]
    if text.startswith("Solve the following"):
        return "<think>thinking</think>draft proof"
    if text.startswith("You are checking"):
        return "Looks right. \\boxed{1}" if "fixed proof" in text else "A gap. \\boxed{0}"
    if text.startswith("Here is a proof"):
        return "<think>thinking</think>fixed proof"
    return "<points>7 out of 7</points>" if "fixed proof" in text else "<points>0 out of 7</points>"  # grading


@pytest.fixture
def prover():
    with loopback_chat(_prove_or_grade) as srv:
        yield srv


@pytest.fixture
def bench(tmp_path):
    d = tmp_path / "imo_bench"
    d.mkdir()
    with open(d / "proofbench_v2.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["Problem ID", "Problem", "Solution", "Grading guidelines"])
        w.writeheader()
        for pid, problem in PROBLEMS.items():
            w.writerow({"Problem ID": pid, "Problem": problem, "Solution": "By definition.", "Grading guidelines": "7 if right."})
    (d / "judge.txt").write_text("Grade.\nProblem: {problem}\nReference: {reference_solution}\nRubric: {rubric}\n"
                                 "Proof: {predicted_answer}\n")
    return d


def _invoke(args):
    r = runner.invoke(app, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output[r.output.index("{"):])


def _prove_args(bench, server, out):
    return ["eval", "prove", "--data", str(bench), "--endpoint", server, "--model", "prover", "--out", str(out),
            "--profile", "tiny", "--limit", "2", "--concurrency", "2"]


def test_prove_writes_final_proofs_that_score_grades(bench, prover, tmp_path):
    out = tmp_path / "prove"
    s = _invoke(_prove_args(bench, prover.url, out))
    assert s["problems"] == 2 and s["budget"]["generations"] == 4  # the tiny profile's olympiad.proof_tts
    finals = [json.loads(x) for x in (out / "responses.jsonl").read_text().splitlines()]
    assert finals == [{"Problem ID": pid, "response": "fixed proof", "thinking": False}
                      for pid in ("PB-Basic-001", "PB-Basic-002")]
    log = [json.loads(x) for x in (out / "tts.jsonl").read_text().splitlines()]
    final = {r["problem_id"]: r for r in log if r["kind"] == "final"}
    # tiny budget: 4 drafts x 2 verifications rated 0, then round 1 refines the top 2 -> rated 1, stop
    assert set(final) == {"PB-Basic-001", "PB-Basic-002"}
    assert final["PB-Basic-001"]["calls"] == {"generate": 4, "verify": 12, "refine": 2} and final["PB-Basic-001"]["rating"] == 1
    assert not any("infinitely many primes" in p for p in prover.prompts)  # --limit 2
    graded = _invoke(["eval", "score", "--suite", "imo-proof", "--responses", str(out / "responses.jsonl"),
                      "--data", str(bench), "--judge-prompt", str(bench / "judge.txt"), "--judge-endpoint",
                      prover.url, "--judge-model", "judge", "--profile", "tiny", "--samples", "1",
                      "--out", str(tmp_path / "graded")])
    assert graded["n"] == 3 and graded["n_missing"] == 1 and graded["points_mean"] == pytest.approx(14 / 3)


def test_a_cut_off_run_resumes_without_redoing_finished_problems(bench, prover, tmp_path):
    out = tmp_path / "prove"
    _invoke(_prove_args(bench, prover.url, out))
    log = out / "tts.jsonl"
    lines = log.read_text().splitlines()
    cut = max(i for i, x in enumerate(lines) if json.loads(x)["kind"] == "final")  # the second problem to finish
    redo = json.loads(lines[cut])["problem_id"]
    log.write_text("\n".join(lines[:cut]) + "\n")  # killed just before its final record
    prover.bodies.clear()
    _invoke(_prove_args(bench, prover.url, out))
    problem = PROBLEMS[redo]
    assert prover.prompts and all(problem in p for p in prover.prompts if p.startswith("Solve"))
    other = next(p for p in ("PB-Basic-001", "PB-Basic-002") if p != redo)
    assert not any(PROBLEMS[other] in p for p in prover.prompts)  # finished: not asked again
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    assert sorted(r["problem_id"] for r in recs if r["kind"] == "final") == ["PB-Basic-001", "PB-Basic-002"]
    assert sum(r["problem_id"] == redo and r["kind"] == "proof" for r in recs) == 6  # 4 drafts + 2 refined, once
    assert len((out / "responses.jsonl").read_text().splitlines()) == 2


def test_prove_refuses_a_missing_benchmark_and_an_unknown_version(tmp_path, bench):
    r = runner.invoke(app, ["eval", "prove", "--data", str(tmp_path / "nowhere"), "--endpoint", "http://127.0.0.1:9",
                            "--model", "m", "--out", str(tmp_path / "o"), "--profile", "tiny"])
    assert r.exit_code == 2 and "ProofBench v2 not found" in r.output.replace("\n", " ")
    r = runner.invoke(app, ["eval", "prove", "--data", str(bench), "--endpoint", "http://127.0.0.1:9",
                            "--model", "m", "--out", str(tmp_path / "o"), "--version", "v9"])
    assert r.exit_code == 2 and re.search(r"unknown ProofBench version 'v9'", r.output.replace("\n", " "))


def test_prove_stops_at_once_on_a_server_that_does_not_answer(bench, tmp_path):
    r = runner.invoke(app, ["eval", "prove", "--data", str(bench), "--endpoint", "http://127.0.0.1:9", "--model", "m",
                            "--out", str(tmp_path / "o"), "--profile", "tiny"])
    assert r.exit_code == 2 and "does not answer" in r.output.replace("\n", " ")
    assert not (tmp_path / "o" / "responses.jsonl").exists()


def test_a_server_that_stops_answering_stops_the_loop_a_failed_request_does_not():
    from recipe.eval.backends.openai_client import EndpointUnavailable, OpenAIChatClient
    from recipe.eval.backends.backend_interface import Generation
    from recipe.eval.olympiad.completion_client import HarnessChat, JudgeError
    from recipe.eval.sampling_settings import SamplingParams

    class Client(OpenAIChatClient):
        alive = True

        def chat(self, messages, sampling, seed=0):
            return Generation("", error="gave up after 5 attempts: ConnectError")

        def health(self):
            return self.alive

    client = Client("http://127.0.0.1:9", "m")
    chat = HarnessChat(client, SamplingParams())
    with pytest.raises(JudgeError):  # the server answers its health check: one failed request, recorded
        chat.complete([{"role": "user", "content": "x"}])
    client.alive = False
    with pytest.raises(EndpointUnavailable, match="stopped answering"):
        chat.complete([{"role": "user", "content": "x"}])
