"""`recipe eval launcher-config`: every Table 1 row is a NeMo Evaluator launcher task with the paper's repeats and
sampling, or listed as not covered; the task names are the launcher's own; `nel run --dry-run` (NVIDIA's launcher, in
.venv-evals) accepts the config once its ??? values are filled, and refuses it before."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from recipe.eval.launcher_config import NOT_COVERED, TABLE1_TASKS, launcher_config, write_launcher_config
from recipe.eval.paper_values import profile_benchmarks

ROOT = Path(__file__).resolve().parents[1]
EVALS = ROOT / ".venv-evals"


def _evals_venv_or_skip() -> Path:
    if (EVALS / ".installed").is_file():
        return EVALS
    failed = EVALS / ".install-failed"
    pytest.skip(failed.read_text().splitlines()[0] if failed.is_file()
                else "NVIDIA's evaluators are not installed (.venv-evals): run `make evals-venv`")


def _tasks(cfg: dict) -> dict[str, dict]:
    return {t["name"]: t.get("nemo_evaluator_config", {}) for t in cfg["evaluation"]["tasks"]}


def test_every_table1_row_is_a_task_or_listed_as_not_covered():
    paper_rows = {n for n, e in profile_benchmarks("paper").suites.items() if e.paper}
    assert paper_rows - set(TABLE1_TASKS) - set(NOT_COVERED) == set()
    assert set(TABLE1_TASKS).isdisjoint(NOT_COVERED)


def test_tasks_carry_the_papers_repeats_sampling_and_mode():
    tasks = _tasks(launcher_config("/ckpt"))
    gpqa = tasks["ns_gpqa"]["config"]["params"]
    assert (gpqa["temperature"], gpqa["top_p"], gpqa["extra"]["num_repeats"]) == (1.0, 0.95, 8)   # EVAL.md §2
    assert tasks["ns_aime2025"]["config"]["params"]["extra"]["num_repeats"] == 64
    ifb = tasks["ns_ifbench"]["config"]["params"]
    assert (ifb["temperature"], ifb["max_new_tokens"], ifb["extra"]["num_repeats"]) == (0.6, 32768, 8)
    assert tasks["ns_mmlu_pro"]["config"]["params"]["extra"]["num_repeats"] == 1
    assert [tasks[f"tau2_bench_{d}"]["config"]["params"]["extra"]["n_samples"]
            for d in ("airline", "retail", "telecom")] == [16, 8, 8]
    think = lambda t: tasks[t]["target"]["api_endpoint"]["adapter_config"]["params_to_add"][   # noqa: E731
        "chat_template_kwargs"]["enable_thinking"]
    assert think("ns_gpqa") is True and think("ruler-1m-chat") is False   # NIAH@1M: reasoning off


def test_written_file_names_each_tasks_row_and_the_uncovered_rows(tmp_path):
    info = write_launcher_config(tmp_path / "table1.yaml", "/ckpt", hf_home="/lustre/hf", tensor_parallel=4)
    text = (tmp_path / "table1.yaml").read_text()
    cfg = yaml.safe_load(text)
    assert cfg["deployment"]["checkpoint_path"] == "/ckpt" and cfg["deployment"]["tensor_parallel_size"] == 4
    assert "--reasoning-parser nemotron_v3" in cfg["deployment"]["extra_args"]
    assert cfg["env_vars"]["HF_DATASETS_OFFLINE"] == "lit:1"
    assert info["tasks"] == len(cfg["evaluation"]["tasks"])
    for row in NOT_COVERED:
        assert f"#   {row}: " in text


def test_task_names_are_the_launchers_own():
    venv = _evals_venv_or_skip()
    irs = next(venv.glob("lib/python*/site-packages/nemo_evaluator_launcher/resources/all_tasks_irs.yaml"))
    known = {t["name"] for t in yaml.safe_load(irs.read_text())["tasks"]}
    ours = {t.name for tasks in TABLE1_TASKS.values() for t in tasks}
    assert ours - known == set()


def _dry_run(venv: Path, config: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "USER": os.environ.get("USER", "recipe"), "NEMO_EVALUATOR_TELEMETRY_LEVEL": "0",
           "HOME": str(tmp_path)}
    return subprocess.run([str(venv / "bin" / "nel"), "run", "--config", str(config), "--dry-run"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


def test_nel_dry_run_accepts_the_filled_config_and_refuses_the_unfilled_one(tmp_path):
    venv = _evals_venv_or_skip()
    cfg = tmp_path / "table1.yaml"
    write_launcher_config(cfg, "/ckpt/cascade2", hf_home="/lustre/hf", hostname="login.example", account="acct",
                          output_dir="/lustre/results")
    refused = _dry_run(venv, cfg, tmp_path)
    assert refused.returncode != 0 and "Missing mandatory value" in refused.stdout + refused.stderr
    filled = tmp_path / "filled.yaml"
    filled.write_text(cfg.read_text().replace("???", "http://judge.example/v1"))
    ok = _dry_run(venv, filled, tmp_path)
    out = ok.stdout + ok.stderr
    assert ok.returncode == 0, out[-3000:]
    assert "vllm serve /checkpoint" in out and "--mamba-ssm-cache-dtype float32" in out
    for name in ("ns_gpqa", "tau2_bench_airline", "ruler-1m-chat", "mmlu_redux_instruct"):
        assert name in out
