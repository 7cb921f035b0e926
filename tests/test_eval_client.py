"""The OpenAI-compatible client against a REAL server on loopback: `transformers serve` with a tiny
NemotronHForCausalLM checkpoint (built here with a reduced tiny profile). Also: retries with backoff on a dead port,
per-request timeouts, and a killed `recipe eval` resuming from its cached samples."""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

import pytest

from _tiny_checkpoint import build_tiny_checkpoint
from recipe.eval.backends.backend_interface import Job
from recipe.eval.backends.openai_client import OpenAIChatClient
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.sampling_settings import SamplingParams

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    return build_tiny_checkpoint(tmp_path_factory.mktemp("ck") / "tiny")


@pytest.fixture(scope="module")
def server(tiny_checkpoint, tmp_path_factory):
    port = _free_port()
    log = open(tmp_path_factory.mktemp("serve") / "serve.log", "w")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    exe = os.path.join(os.path.dirname(sys.executable), "transformers")
    proc = subprocess.Popen([exe, "serve", str(tiny_checkpoint), "--host", "127.0.0.1", "--port", str(port),
                             "--device", "cpu"], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    client = OpenAIChatClient(url, str(tiny_checkpoint), extended_sampling=False, max_retries=0)
    deadline = time.monotonic() + 120
    while not client.health():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"transformers serve did not come up: {open(log.name).read()[-2000:]}")
        time.sleep(0.5)
    yield url, str(tiny_checkpoint)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    log.close()


def test_chat_completions_with_usage_and_bounded_concurrency(server):
    url, model = server
    client = OpenAIChatClient(url, model, extended_sampling=False, concurrency=2)
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=6, thinking=True, k=1)
    jobs = [Job(f"q{i}", 0, [{"role": "user", "content": f"What is {i}+1?"}], seed=i) for i in range(5)]
    got = dict((j.item_id, g) for j, g in client.generate(jobs, sampling))
    assert set(got) == {f"q{i}" for i in range(5)}
    for g in got.values():
        assert g.error is None and g.completion_tokens is not None and 0 < g.completion_tokens <= 6
        assert g.prompt_tokens > 5 and g.finish_reason in ("stop", "length") and g.attempts == 1
        assert g.reasoning is None  # transformers serve has no reasoning parser: raw text kept whole
    assert client.describe()["concurrency"] == 2 and client.health()


def test_vllm_only_knobs_are_refused_not_dropped(server):
    url, model = server
    client = OpenAIChatClient(url, model, extended_sampling=False)
    with pytest.raises(ValueError, match="top_k/min_p"):
        list(client.generate([Job("q", 0, [{"role": "user", "content": "hi"}])], SamplingParams(top_k=20)))
    # a vLLM-style client sends them; this server answers 422, which is not retried
    g = OpenAIChatClient(url, model, extended_sampling=True, max_retries=3).chat(
        [{"role": "user", "content": "hi"}], SamplingParams(max_tokens=2))
    assert g.error and "HTTP 422" in g.error and g.attempts == 1


def test_retries_with_backoff_then_gives_up_and_timeouts_apply(server):
    dead = OpenAIChatClient(f"http://127.0.0.1:{_free_port()}", "m", max_retries=2, backoff_s=0.01, timeout_s=2)
    g = dead.chat([{"role": "user", "content": "hi"}], SamplingParams(max_tokens=2))
    assert g.error.startswith("gave up after 3 attempts") and g.attempts == 3 and "Connect" in g.error
    url, model = server
    slow = OpenAIChatClient(url, model, extended_sampling=False, max_retries=1, backoff_s=0.01, timeout_s=0.001)
    g = slow.chat([{"role": "user", "content": "hi"}], SamplingParams(max_tokens=64))
    assert g.error and "Timeout" in g.error and g.attempts == 2


# Runs `recipe eval` in this process with the harness's progress callback counting cached samples: after the N-th
# is written and flushed it says so on stdout and blocks, so the test kills the process at that exact point.
_PAUSING_EVAL = """
import sys

import recipe.eval.api as api
from recipe.cli import main

stop_after, argv = int(sys.argv[1]), sys.argv[2:]
evaluate = api.evaluate


def pausing_evaluate(*args, **kw):
    cached = 0

    def progress(job, generation):
        nonlocal cached
        cached += 1
        if cached == stop_after:
            print(f"cached {cached}", flush=True)
            sys.stdin.read()  # blocks: the test kills this process here

    return evaluate(*args, progress=progress, **kw)


api.evaluate = pausing_evaluate
sys.argv = ["recipe", *argv]
main()
"""


def _wait_for_line(proc, marker: str, stderr_path, timeout_s: float = 300) -> None:
    """Read the child's stdout until ``marker`` (a safety timeout only: the child announces the point itself)."""
    deadline = time.monotonic() + timeout_s
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no {marker!r} within {timeout_s} s: {stderr_path.read_text()[-2000:]}"
        line = proc.stdout.readline()
        assert line, f"eval exited ({proc.wait()}) before {marker!r}: {stderr_path.read_text()[-2000:]}"
        if line.strip() == marker:
            return


def test_killed_eval_resumes_from_cached_samples(server, tmp_path, shared_dir):
    url, model = server
    out = tmp_path / "ev"
    args = ["eval", "--suite", "aime25", "--endpoint", url, "--model", model, "--server", "standard", "--limit", "12",
            "-k", "4", "--max-tokens", "8", "--concurrency", "1", "--out", str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    driver = tmp_path / "pausing_eval.py"
    driver.write_text(_PAUSING_EVAL)
    stop_after = 3
    with open(tmp_path / "killed.err", "w") as err:
        proc = subprocess.Popen([sys.executable, str(driver), str(stop_after), *args], env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        try:
            _wait_for_line(proc, f"cached {stop_after}", tmp_path / "killed.err")
            assert proc.poll() is None
        finally:
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    samples = out / "aime25" / "samples.jsonl"
    cached = [json.loads(x) for x in samples.read_text().splitlines()]
    assert len(cached) == stop_after and not (out / "aime25" / "results.json").exists()
    res = subprocess.run([sys.executable, "-m", "recipe.cli", *args], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    r = json.loads((out / "aime25" / "results.json").read_text())
    assert r["complete"] and r["n"] == 12 and r["k"] == 4
    # the killed run's samples are reused, not generated again: 12 problems x k=4 = 48 in all
    assert r["generation"]["reused_from_cache"] == stop_after and r["generation"]["generated"] == 48 - stop_after
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    assert lines[:stop_after] == cached and len(lines) == 48
    assert len({(x["item_id"], x["sample"]) for x in lines}) == 48
    s = r["settings"]
    assert s["backend"] == "openai_chat" and s["model"] == model and s["sampling"]["top_k"] == -1
    assert s["source"]["via"] == "mirror" and s["source"]["limit"] == 12 and s["scorer"] == f"aime25@{get_suite('aime25').scorer_version}"
    assert r["generation"]["completion_tokens"] > 0
