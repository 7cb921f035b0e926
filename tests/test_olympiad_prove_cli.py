"""``recipe eval prove``: IMO-ProofBench proofs by generate -> verify -> refine against a loopback OpenAI-compatible
server, the final proofs graded by ``recipe eval score --suite imo-proof``, and a cut-off run resumed. The benchmark
and judge prompt are files written here, in the layout of IMO-Bench."""
from __future__ import annotations

import csv
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from recipe.cli import app

runner = CliRunner()
PROBLEMS = {"PB-Basic-001": "Prove that 1 + 1 = 2.", "PB-Basic-002": "Prove that 2 + 2 = 4.",
            "PB-Advanced-001": "Prove that there are infinitely many primes."}


class _Prover(BaseHTTPRequestHandler):
    """Drafts are rated 0, refinements ("fixed proof") 1; the grader gives a fixed proof 7 points, anything else 0."""
    prompts: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        type(self).prompts.append(text)
        if text.startswith("Solve the following"):
            reply = "<think>thinking</think>draft proof"
        elif text.startswith("You are checking"):
            reply = "Looks right. \\boxed{1}" if "fixed proof" in text else "A gap. \\boxed{0}"
        elif text.startswith("Here is a proof"):
            reply = "<think>thinking</think>fixed proof"
        else:  # the grading prompt
            reply = "<points>7 out of 7</points>" if "fixed proof" in text else "<points>0 out of 7</points>"
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # the health check: GET /v1/models
        data = json.dumps({"data": [{"id": "prover"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture
def prover_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Prover)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Prover.prompts = []
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


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


def test_prove_writes_final_proofs_that_score_grades(bench, prover_server, tmp_path):
    out = tmp_path / "prove"
    s = _invoke(_prove_args(bench, prover_server, out))
    assert s["problems"] == 2 and s["budget"]["generations"] == 4  # the tiny profile's olympiad.proof_tts
    finals = [json.loads(x) for x in (out / "responses.jsonl").read_text().splitlines()]
    assert finals == [{"Problem ID": pid, "response": "fixed proof", "thinking": False}
                      for pid in ("PB-Basic-001", "PB-Basic-002")]
    log = [json.loads(x) for x in (out / "tts.jsonl").read_text().splitlines()]
    final = {r["problem_id"]: r for r in log if r["kind"] == "final"}
    # tiny budget: 4 drafts x 2 verifications rated 0, then round 1 refines the top 2 -> rated 1, stop
    assert set(final) == {"PB-Basic-001", "PB-Basic-002"}
    assert final["PB-Basic-001"]["calls"] == {"generate": 4, "verify": 12, "refine": 2} and final["PB-Basic-001"]["rating"] == 1
    assert not any("infinitely many primes" in p for p in _Prover.prompts)  # --limit 2
    graded = _invoke(["eval", "score", "--suite", "imo-proof", "--responses", str(out / "responses.jsonl"),
                      "--data", str(bench), "--judge-prompt", str(bench / "judge.txt"), "--judge-endpoint",
                      prover_server, "--judge-model", "judge", "--profile", "tiny", "--samples", "1",
                      "--out", str(tmp_path / "graded")])
    assert graded["n"] == 3 and graded["n_missing"] == 1 and graded["points_mean"] == pytest.approx(14 / 3)


def test_a_cut_off_run_resumes_without_redoing_finished_problems(bench, prover_server, tmp_path):
    out = tmp_path / "prove"
    _invoke(_prove_args(bench, prover_server, out))
    log = out / "tts.jsonl"
    lines = log.read_text().splitlines()
    cut = max(i for i, x in enumerate(lines) if json.loads(x)["kind"] == "final")  # the second problem to finish
    redo = json.loads(lines[cut])["problem_id"]
    log.write_text("\n".join(lines[:cut]) + "\n")  # killed just before its final record
    _Prover.prompts = []
    _invoke(_prove_args(bench, prover_server, out))
    problem = PROBLEMS[redo]
    assert _Prover.prompts and all(problem in p for p in _Prover.prompts if p.startswith("Solve"))
    other = next(p for p in ("PB-Basic-001", "PB-Basic-002") if p != redo)
    assert not any(PROBLEMS[other] in p for p in _Prover.prompts)  # finished: not asked again
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
    from types import SimpleNamespace

    from recipe.eval.backends.openai_client import EndpointUnavailable
    from recipe.eval.olympiad.completion_client import HarnessChat, JudgeError
    from recipe.eval.sampling_settings import SamplingParams

    class Client:
        base_url = "http://127.0.0.1:9/v1"
        alive = True

        def chat(self, messages, sampling, seed=0):
            return SimpleNamespace(error="gave up after 5 attempts: ConnectError", content="")

        def health(self):
            return self.alive

    client = Client()
    chat = HarnessChat(client, SamplingParams())
    with pytest.raises(JudgeError):  # the server answers its health check: one failed request, recorded
        chat.complete([{"role": "user", "content": "x"}])
    client.alive = False
    with pytest.raises(EndpointUnavailable, match="stopped answering"):
        chat.complete([{"role": "user", "content": "x"}])
