"""Table 1 rows through NVIDIA's harnesses and lm-eval (`recipe eval --suite gpqa_diamond|mmlu_redux|...`): the
datasets go into a benchmark mirror from a (loopback) Hub with `recipe eval fetch-data`, then the harness runs
offline from .venv-evals against a loopback chat server and its own grading decides the score (a server answering
rightly scores 100, wrongly 0); results.json carries the score, CI, n, harness version and command, items.jsonl every
exchange; a missing harness, dataset, tokenizer or user simulator is one line and the suite is skipped, never 0."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from _harness_fixtures import GPQA_REPO, PRO_REPO, REDUX_REPO, gpqa_files, mmlu_pro_files, redux_files, right_letter
from _loopback_chat import loopback_chat
from recipe.eval.harness_suites import HARNESS_SUITES, harness_unavailable, lm_eval_task_configs
from recipe.eval.recording_proxy import RecordingProxy

ROOT = Path(__file__).resolve().parents[1]


def _harness_or_skip() -> None:
    why = harness_unavailable(HARNESS_SUITES["gpqa_diamond"])
    if why:
        pytest.skip(why)


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("HF_ENDPOINT", "RECIPE_BENCHMARK_MIRROR")}
    return subprocess.run([sys.executable, "-m", "recipe.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=600)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory) -> Path:
    """A benchmark mirror filled by `recipe eval fetch-data` from a loopback Hub holding fixture datasets."""
    _harness_or_skip()
    from hub_server.fixtures import HubServer
    hub = HubServer.start(tmp_path_factory.mktemp("hub") / "srv")
    try:
        hub.seed_repo("dataset", GPQA_REPO, gpqa_files())
        hub.seed_repo("dataset", REDUX_REPO, redux_files(lm_eval_task_configs()[1]))
        hub.seed_repo("dataset", PRO_REPO, mmlu_pro_files())
        m = tmp_path_factory.mktemp("mirror")
        r = _cli("eval", "fetch-data", "--suite", "gpqa_diamond", "--suite", "mmlu_redux", "--benchmarks", str(m),
                 "--suite", "mmlu_pro",
                 env={"HF_ENDPOINT": hub.endpoint, "HF_HUB_DISABLE_XET": "1"})
        assert r.returncode == 0, r.stderr[-2000:]
        assert "Idavidrein/gpqa:gpqa_diamond: {'train': 6} rows" in r.stdout
    finally:
        hub.stop()
    return m


def _answer(right: bool):
    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        letter = right_letter(prompt) if right else next(x for x in "ABCD" if x != right_letter(prompt))
        return letter if "only the correct letter" in prompt else f"Let me think.\nAnswer: {letter}"
    return reply


def test_suites_say_where_the_data_comes_from_and_whether_it_is_here(mirror):
    out = _cli("eval", "suites", "--benchmarks", str(mirror)).stdout
    lines = out.splitlines()

    def data_line(name):
        i = next(i for i, x in enumerate(lines) if x.startswith(name + " "))
        return next(x for x in lines[i + 1:i + 3] if "data:" in x)
    assert "present" in data_line("gpqa_diamond") and "hf_home" in data_line("gpqa_diamond")
    assert "present" in data_line("mmlu_redux")
    assert "present" in data_line("mmlu_pro")
    assert "ABSENT" in _cli("eval", "suites", "--benchmarks", str(mirror / "hf_home" / "hub")).stdout
    assert "user-simulator" in data_line("tau2_airline")


@pytest.mark.parametrize("right", [True, False])
def test_gpqa_is_graded_by_simple_evals_offline(mirror, tmp_path, right):
    with loopback_chat(_answer(right)) as chat:
        r = _cli("eval", "--suite", "gpqa_diamond", "--endpoint", chat.url, "--model", "served", "--benchmarks",
                 str(mirror), "-k", "2", "--max-tokens", "64", "--out", str(tmp_path),
                 "-s", "benchmarks.allow_hub=false", env={"HF_HUB_OFFLINE": "1"})
        bodies = list(chat.bodies)
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    res = json.loads((tmp_path / "gpqa_diamond" / "results.json").read_text())
    assert res["score"] == (100.0 if right else 0.0)
    assert res["n"] == 6 and res["k"] == 2 and res["complete"]
    assert res["ci_low"] <= res["score"] <= res["ci_high"]
    assert res["harness"]["version"]["nvidia-simple-evals"] == "26.3"
    assert res["harness"]["version"]["nemo-evaluator"] == "0.2.8"
    assert "--eval_type simple_evals.gpqa_diamond" in res["harness"]["command"]
    # the paper's GPQA settings (EVAL.md §2): T 1.0, top-p 0.95, thinking on; the budget from the command line
    assert res["settings"]["sampling"] == {"k": 2, "temperature": 1.0, "top_p": 0.95, "max_tokens": 64,
                                           "thinking": True}
    assert len(bodies) == 12 and all(b["chat_template_kwargs"]["enable_thinking"] is True for b in bodies)
    assert all(b["temperature"] == 1.0 and b["top_p"] == 0.95 for b in bodies)
    items = [json.loads(x) for x in (tmp_path / "gpqa_diamond" / "items.jsonl").read_text().splitlines()]
    assert sum(len(i["samples"]) for i in items) == 12
    assert all("Which number is" in i["messages"][-1]["content"] for i in items)


def test_mmlu_pro_is_graded_by_simple_evals_from_the_mirror_first(mirror, tmp_path):
    """The Hub allowed (the paper profile's default) but dead: data prepared in the mirror is read without it."""
    with loopback_chat(_answer(True)) as chat:
        r = _cli("eval", "--suite", "mmlu_pro", "--endpoint", chat.url, "--model", "served", "--benchmarks",
                 str(mirror), "--max-tokens", "64", "--out", str(tmp_path),
                 env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_ETAG_TIMEOUT": "1"})
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    res = json.loads((tmp_path / "mmlu_pro" / "results.json").read_text())
    assert res["score"] == 100.0 and res["n"] == 4 and res["k"] == 1
    assert "--eval_type simple_evals.mmlu_pro" in res["harness"]["command"]


def test_mmlu_redux_runs_through_lm_eval_with_a_score_per_item(mirror, tmp_path):
    with loopback_chat(_answer(True)) as chat:
        r = _cli("eval", "--suite", "mmlu_redux", "--endpoint", chat.url, "--model", "served", "--benchmarks",
                 str(mirror), "--limit", "1", "--max-tokens", "16", "--out", str(tmp_path),
                 "-s", "benchmarks.allow_hub=false", env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    res = json.loads((tmp_path / "mmlu_redux" / "results.json").read_text())
    subjects = len(lm_eval_task_configs()[1])
    assert res["score"] == 100.0 and res["n"] == subjects and res["per_item_scores"]
    assert res["harness"]["version"] == {"lm-eval": "0.4.13"} and "--tasks mmlu_redux_generative" in \
        res["harness"]["command"]
    items = [json.loads(x) for x in (tmp_path / "mmlu_redux" / "items.jsonl").read_text().splitlines()]
    assert len(items) == subjects and all(i["mean_score"] == 1.0 and i["target"] == "B" for i in items)


def test_missing_data_tokenizer_or_user_simulator_is_one_line_and_skipped(mirror, tmp_path):
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    r = _cli("eval", "--suite", "gpqa_diamond", "--suite", "ruler_4k", "--suite", "tau2_retail", "--endpoint",
             "http://127.0.0.1:9", "--model", "m", "--benchmarks", str(empty), "--out", str(tmp_path / "o"))
    assert r.returncode == 1
    skipped = [x for x in r.stderr.splitlines() if x.startswith("skipped ")]
    assert len(skipped) == 3, r.stderr
    assert "recipe eval fetch-data --suite gpqa_diamond" in r.stderr
    assert "--tokenizer PATH" in r.stderr and "--user-endpoint URL --user-model NAME" in r.stderr
    assert not (tmp_path / "o" / "gpqa_diamond" / "results.json").exists()


def test_a_missing_harness_environment_names_make_evals_venv(tmp_path):
    r = _cli("eval", "--suite", "gpqa_diamond", "--suite", "mmlu_redux", "--endpoint", "http://127.0.0.1:9",
             "--model", "m", "--out", str(tmp_path), env={"RECIPE_EVALS_VENV": str(tmp_path / "no_venv")})
    assert r.returncode == 1
    assert r.stderr.count("run `make evals-venv`") == 2, r.stderr
    assert "unavailable" in r.stdout and '"score"' not in r.stdout


def test_the_proxy_records_exchanges_and_sets_thinking_only_where_the_request_leaves_it():
    with loopback_chat(lambda b: "ok") as chat, RecordingProxy(chat.url, thinking=False) as proxy:
        url = proxy.url + "/v1/chat/completions"
        httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "a"}]}, timeout=60).raise_for_status()
        httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "b"}],
                              "chat_template_kwargs": {"enable_thinking": True}}, timeout=60).raise_for_status()
        assert httpx.get(proxy.url + "/v1/models", timeout=60).status_code == 200
        assert [b["chat_template_kwargs"]["enable_thinking"] for b in chat.bodies] == [False, True]
        assert [e["response"]["choices"][0]["message"]["content"] for e in proxy.exchanges] == ["ok", "ok"]
    with RecordingProxy("http://127.0.0.1:9") as dead:
        r = httpx.post(dead.url + "/v1/chat/completions", json={"messages": []}, timeout=60)
        assert r.status_code == 502 and dead.exchanges[0]["error"].startswith("upstream unreachable")


def test_tau2_plays_episodes_against_the_user_simulator_and_scores_each_task(tmp_path):
    _harness_or_skip()
    with loopback_chat(lambda b: "###STOP###") as user, loopback_chat(lambda b: "How can I help?") as agent:
        r = _cli("eval", "--suite", "tau2_retail", "--endpoint", agent.url, "--model", "served", "--user-endpoint",
                 user.url, "--user-model", "usersim", "--limit", "2", "-k", "1", "--out", str(tmp_path))
        user_models = {b["model"] for b in user.bodies}
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    res = json.loads((tmp_path / "tau2_retail" / "results.json").read_text())
    # the simulated user ends every conversation at once: no task is solved, and tau2's own reward says so
    assert res["score"] == 0.0 and res["n"] == 2 and res["metric"].endswith("pass@1/pass@1")
    assert user_models == {"usersim"}
    items = [json.loads(x) for x in (tmp_path / "tau2_retail" / "items.jsonl").read_text().splitlines()]
    assert sorted(i["id"] for i in items) == ["0", "1"]
    assert all(s["termination"] == "user_stop" and s["score"] == 0.0 for i in items for s in i["samples"])


def test_a_checkpoint_is_served_by_vllm_for_the_harness(mirror, tmp_path):
    """`--checkpoint` without `--endpoint`: the project's vLLM server (.venv-vllm) serves the real SmolLM2 for the
    suite's duration and simple-evals grades its answers (a 135M model rarely writes 'Answer: X'; the score is
    whatever the harness says, within [0, 100])."""
    from _smollm2 import smollm2_folder
    from recipe.serve.vllm_env import vllm_unavailable_reason
    why = vllm_unavailable_reason()
    if why:
        pytest.skip(why)
    r = _cli("eval", "--suite", "gpqa_diamond", "--checkpoint", str(smollm2_folder()), "--benchmarks", str(mirror),
             "-k", "1", "--max-tokens", "48", "--no-thinking", "--out", str(tmp_path), "-s", "benchmarks.allow_hub=false",
             env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    res = json.loads((tmp_path / "gpqa_diamond" / "results.json").read_text())
    assert res["complete"] and res["n"] == 6 and 0.0 <= res["score"] <= 100.0
    assert res["settings"]["endpoint"].startswith("http://127.0.0.1:") and res["settings"]["model"] == "model"
    items = [json.loads(x) for x in (tmp_path / "gpqa_diamond" / "items.jsonl").read_text().splitlines()]
    answers = [s for i in items for s in i["samples"]]
    assert len(answers) == 6 and all(a["finish_reason"] in ("stop", "length") and a["content"] for a in answers)


def test_mmlu_redux_subjects_are_found_after_the_if_checkers_registered_a_bare_lm_eval():
    """IF scoring registers `lm_eval` as a bare package (no __file__, its __init__ never run); `recipe eval suites` in
    the same process must still find lm-eval's MMLU-Redux task files."""
    from recipe.rewards import reference_if
    reference_if._import_ifeval()
    repo, subjects = lm_eval_task_configs()
    assert repo == REDUX_REPO and len(subjects) == 57 and "abstract_algebra" in subjects
