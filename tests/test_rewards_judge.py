"""Pairwise judges: the OpenAI-compatible client against a tiny local HTTP server, and the rubric judge."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from recipe.rewards import UnknownVerifierError, verify, verify_batch
from recipe.rewards.pairwise_judges import DeterministicRubricJudge, OpenAIPairwiseJudge, RubricJudge, judge_both_orders, make_judge, parse_judgement


class _Handler(BaseHTTPRequestHandler):
    replies: list = []
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        reply = type(self).replies.pop(0) if type(self).replies else "[[TIE]]"
        if reply == "500":
            self.send_response(500)
            self.end_headers()
            return
        out = {"choices": [{"message": {"role": "assistant", "content": reply}}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    srv = HTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.replies, _Handler.seen = [], []
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", _Handler
    srv.shutdown()
    srv.server_close()


def test_openai_judge_parses_verdicts_and_sends_the_request(server, monkeypatch):
    url, h = server
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    judge = OpenAIPairwiseJudge(url, "genrm-tiny", api_key_env="JUDGE_KEY", max_retries=0)
    h.replies = ["<think>compare</think>A is more accurate. [[A]]", "Response B wins [[B]]", '{"preference": "tie", "reason": "same"}',
                 "Ranking: \\boxed{5}", "no verdict at all"]
    assert judge.compare("2+2?", "4", "5").preference == "A"
    assert judge.compare("2+2?", "5", "4").preference == "B"
    assert judge.compare("q", "x", "y").preference == "tie"
    v = judge.compare("q", "x", "y")
    assert v.preference == "B" and v.reason == "judge:ranking_score"
    v = judge.compare("q", "x", "y")
    assert v.preference == "tie" and v.reason == "unparsed"
    req = h.seen[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["model"] == "genrm-tiny" and "2+2?" in req["body"]["messages"][0]["content"]


def test_openai_judge_errors_and_empty_responses_do_not_raise(server):
    url, h = server
    judge = OpenAIPairwiseJudge(url, "m", max_retries=1)
    h.replies = ["500", "500"]
    v = judge.compare("q", "a", "b")
    assert v.preference == "tie" and v.reason.startswith("judge_error")
    n_calls = len(h.seen)
    assert judge.compare("q", "<think>never finished", "fine answer").preference == "B"
    assert len(h.seen) == n_calls  # no request for an unfinished response
    dead = OpenAIPairwiseJudge("http://127.0.0.1:9/v1", "m", max_retries=0, timeout_s=2)
    assert dead.compare("q", "a", "b").reason.startswith("judge_error")


def test_judge_both_orders_flags_position_bias(server):
    url, h = server
    judge = OpenAIPairwiseJudge(url, "m", max_retries=0)
    h.replies = ["[[A]]", "[[A]]"]  # always prefers the first position
    assert judge_both_orders(judge, "q", "a", "b").reason == "order_inconsistent"
    h.replies = ["[[A]]", "[[B]]"]
    assert judge_both_orders(judge, "q", "a", "b").preference == "A"


def test_parse_judgement():
    assert parse_judgement("blah [[B]]") == ("B", "tag")
    assert parse_judgement("[[A]] then on reflection [[TIE]]") == ("tie", "tag")
    assert parse_judgement("\\boxed{2}") == ("A", "ranking_score")
    assert parse_judgement("nothing")[0] is None


def test_rubric_judge_is_deterministic_and_named_so():
    j = make_judge("deterministic_rubric")
    assert isinstance(j, DeterministicRubricJudge) and RubricJudge is DeterministicRubricJudge
    prompt = "Explain why the sky is blue in two sentences."
    good = "The sky is blue because air molecules scatter short blue wavelengths of sunlight more than red ones. This Rayleigh scattering sends blue light toward our eyes from every direction."
    spam = "blue blue blue blue blue blue blue blue blue blue blue blue"
    v1, v2 = j.compare(prompt, good, spam), j.compare(prompt, good, spam)
    assert v1 == v2 and v1.preference == "A" and v1.reason == "rubric"
    assert j.compare(prompt, "<think>unfinished", good).preference == "B"
    assert j.compare(prompt, "", "").preference == "tie"
    with pytest.raises(ValueError):
        make_judge("gpt")


def test_pairwise_rows_are_not_per_response_verifiers():
    rec = {"verifier": {"name": "pairwise_judge"}}
    with pytest.raises(UnknownVerifierError, match="compares two responses"):
        verify(rec, "x")
    with pytest.raises(UnknownVerifierError):
        verify_batch([rec], ["x"])
