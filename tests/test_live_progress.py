"""Live progress and TensorBoard events: local metrics rows become TensorBoard scalars with
NeMo-RL's tag names, one reader serves both backends, and the headless tail prints step, reward and ETA."""
from __future__ import annotations

import json

import pytest

from recipe.reporting.metrics_reader import stage_scalars
from recipe.runs import tb_events
from recipe.runs.layout import RunDir
from recipe.train.progress import StageTail, progress_line


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    return RunDir.for_id("t")


def _rows(n):
    return [{"step": i, "reward_mean": 0.1 * i, "loss": 1.0 - 0.1 * i, "kept_groups": 4 - i % 2, "reward/math": 0.2 * i,
             "masked_frac": 0.01 * i, "updated": True, "time_s": 2.0} for i in range(n)]


def test_local_rows_become_tensorboard_scalars_with_nemo_rl_tags(run):
    for r in _rows(4):
        run.append_metrics("if_rl", r)
    events = list(tb_events.events_dir(run.stage_dir("if_rl")).glob("events.out.tfevents.*"))
    assert len(events) == 1
    df = stage_scalars(run, "if_rl")
    assert list(df.index) == [0, 1, 2, 3]
    assert df["train/reward"].tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert df["train/loss"].iloc[-1] == pytest.approx(0.7)
    assert df["train/reward/math"].iloc[2] == pytest.approx(0.4)
    assert df["train/kept_groups"].tolist() == [4, 3, 4, 3]
    assert df["timing/train/total_step_time"].iloc[0] == 2.0


def test_truncate_on_resume_rewrites_the_event_file(run):
    for r in _rows(5):
        run.append_metrics("sft", r)
    run.truncate_metrics("sft", 3)
    run.append_metrics("sft", {**_rows(5)[3], "loss": 9.0})
    df = stage_scalars(run, "sft")
    assert list(df.index) == [0, 1, 2, 3] and df["train/loss"].iloc[-1] == 9.0


def test_one_reader_for_cluster_metrics_without_local_events(run):
    # the cluster collector writes metrics.jsonl rows with NeMo-RL tags (+ local aliases); no local event files
    p = run.metrics_path("mopd")
    p.parent.mkdir(parents=True)
    p.write_text("".join(json.dumps({"step": s, "job": "mopd", "source": "nemo_rl", "train/loss": 0.5 - s / 10,
                                     "train/reward": 0.3, "loss": 0.5 - s / 10}) + "\n" for s in (1, 2)))
    df = stage_scalars(run, "mopd")
    assert df["train/loss"].tolist() == pytest.approx([0.4, 0.3])
    with pytest.raises(FileNotFoundError, match="no metrics for stage if_rl"):
        stage_scalars(run, "if_rl")


def test_progress_line_has_step_reward_and_eta():
    line = progress_line("if_rl", _rows(3), total=10)
    assert line == "if_rl  step 3/10  reward 0.200  ETA 14 s"
    assert "loss 0.900" in progress_line("sft", [{"step": 0, "loss": 0.9, "time_s": 1.0}], total=5)
    assert progress_line("sft", [{"step": 4, "loss": 0.5, "time_s": 1.0}], total=5).endswith("training done; validating")


def test_stage_tail_prints_new_steps_as_they_are_logged(run):
    lines = []
    tail = StageTail(run.metrics_path("if_rl"), "if_rl", 3, emit=lines.append, every_s=0.0)
    tail.poll()
    assert lines == []  # nothing logged yet
    run.append_metrics("if_rl", _rows(1)[0])
    tail.poll()
    tail.poll()  # the same step is not printed twice
    run.append_metrics("if_rl", _rows(2)[1])
    run.append_metrics("if_rl", _rows(3)[2])
    tail.poll()
    assert [line.split("  ")[1] for line in lines] == ["step 1/3", "step 3/3"]


def test_eta_tracks_the_remaining_time_through_warm_up_and_slow_steps():
    """A stage with a slow first step (warm-up) and a slow step every 8 (a refill round or a validation): the ETA it
    prints never balloons from the warm-up, and once a slow step has been seen it stays within [0.75, 1.35] of the
    time that really remains (a 10-step window alone swung from 0.85 to 1.6 of it, and 3.3 after the warm-up)."""
    import re
    times = [12.0] + [1.0 if (s % 8) else 9.0 for s in range(1, 60)]
    rows = [{"step": s, "reward_mean": 0.1, "time_s": t} for s, t in enumerate(times)]

    def ratio(n):
        eta = float(re.search(r"ETA (\d+) s", progress_line("if_rl", rows[:n], total=60)).group(1))
        return eta / sum(times[n:])
    assert max(ratio(n) for n in range(2, 9)) <= 1.1
    assert all(0.75 <= ratio(n) <= 1.35 for n in range(9, 55)), [round(ratio(n), 2) for n in range(9, 55)]


def test_stage_tail_never_shows_a_previous_attempts_rows(run):
    """A stage rerun with other inputs truncates its metrics after the tail has started: the old attempt's last
    step (here 3 of 3, 'training done') must not be printed as this attempt's progress."""
    import os
    for r in _rows(3):
        run.append_metrics("if_rl", r)
    path = run.metrics_path("if_rl")
    os.utime(path, (1, 1))   # written long before this attempt
    lines = []
    tail = StageTail(path, "if_rl", 3, emit=lines.append, every_s=0.0)
    tail.poll()
    assert lines == []
    run.truncate_metrics("if_rl", 0)
    run.append_metrics("if_rl", _rows(1)[0])
    tail.poll()
    assert [line.split("  ")[1] for line in lines] == ["step 1/3"]
