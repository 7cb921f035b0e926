"""`recipe cluster status`: a synthetic NeMo-RL checkpoint dir + TensorBoard logs (NEMO_RL.md §7 layout) are read
into the run's manifest.json, metrics.jsonl and validation.json."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from recipe.cluster.cluster_notebook_api import monitor
from recipe.cluster.render import render_stage
from recipe.cluster.status import collect
from recipe.config import load_config
from recipe.runs.layout import RunDir


def _scalars(log_dir: Path, rows: dict[int, dict[str, float]]) -> None:
    w = EventFileWriter(str(log_dir))
    for step, tags in rows.items():
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=t, simple_value=v) for t, v in tags.items()])
        w.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summ))
    w.close()


def _step(ckpt: Path, n: int) -> None:
    d = ckpt / f"step_{n}"
    (d / "policy" / "weights" / "iter_0000000").mkdir(parents=True)
    (d / "policy" / "tokenizer").mkdir(parents=True)
    (d / "config.yaml").write_text("grpo: {max_num_steps: 70}\n")
    (d / "training_info.json").write_text(json.dumps({"step": n, "consumed_samples": n * 2048}))


@pytest.fixture
def rendered(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    run = RunDir.for_id("st")
    res = render_stage(load_config("paper", overrides=["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"]), run, "multi_domain_rl", allow_unpinned=True, allow_dirty=True)
    return run, res


def test_status_reads_checkpoints_and_tensorboard(rendered):
    run, res = rendered
    job = res.jobs[0]
    assert collect(run, "multi_domain_rl")["status"] == "pending"   # nothing yet
    _step(job.checkpoint_dir, 5)
    _step(job.checkpoint_dir, 10)
    (job.checkpoint_dir / "tmp_step_15").mkdir()                    # half-written: ignored
    logs = run.stage_dir("multi_domain_rl") / "nemo_rl" / "logs" / "exp_001" / "tensorboard"
    _scalars(logs, {
        s: {"train/loss": 1.0 / s, "train/reward": 0.1 * s} for s in range(1, 11)})
    _scalars(logs / "val", {10: {"validation/total_reward/mean": 0.61,
                                 "validation/mcqa_simple_agent/accuracy": 0.8,
                                 "validation/workplace_assistant_simple_agent/reward/mean": 0.55}})
    m = collect(run, "multi_domain_rl")
    assert m["status"] == "running"
    p = m["progress"]["multi_domain_rl"]
    assert p["checkpoint_steps"] == [5, 10] and p["latest_checkpoint_step"] == 10
    assert p["max_steps"] == 70 and p["fraction"] == pytest.approx(10 / 70)
    assert p["training_info"]["consumed_samples"] == 20480
    rows = run.read_metrics("multi_domain_rl")
    assert [r["step"] for r in rows] == list(range(1, 11))
    assert rows[2]["reward_mean"] == pytest.approx(0.3) and rows[2]["loss"] == pytest.approx(1 / 3)  # local names
    assert rows[0]["train/loss"] == pytest.approx(1.0) and rows[-1]["validation/total_reward/mean"] == pytest.approx(0.61)
    assert run.read_validation("multi_domain_rl") == pytest.approx(
        {"mcqa": 0.8, "workplace_tools": 0.55, "all": 0.61})                # structured_output: no tag, left out
    collect(run, "multi_domain_rl")
    assert len(run.read_metrics("multi_domain_rl")) == 10                  # re-reading never duplicates rows

    # the post-stage conversion lands: stage is done and the manifest points at the HF folder
    job.hf_out.mkdir(parents=True)
    (job.hf_out / "config.json").write_text("{}")
    (job.hf_out / "model.safetensors").write_bytes(b"")
    m = collect(run, "multi_domain_rl")
    assert m["status"] == "done" and m["outputs"]["checkpoint"] == str(job.hf_out)
    teachers = json.loads(run.teachers_path.read_text())                   # teacher selection, as locally
    assert teachers["best_so_far"]["mcqa"] == {"stage": "multi_domain_rl", "checkpoint": run.relpath(job.hf_out), "score": pytest.approx(0.8)}
    assert "all" not in teachers["best_so_far"]
    mon = monitor("st", "multi_domain_rl")
    assert mon["status"] == "done" and mon["validation"]["mcqa"] == pytest.approx(0.8)


def test_status_needs_a_render(tmp_path):
    with pytest.raises(FileNotFoundError, match="recipe cluster render"):
        collect(RunDir(tmp_path / "x"), "if_rl")
