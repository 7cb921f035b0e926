"""TensorBoard event files for local runs, with the tag names NeMo-RL v0.7.0 logs on the cluster.

The local trainers log one ``metrics.jsonl`` row per step; each row is also written to
``<stage dir>/tensorboard/events.out.tfevents.local`` as scalars, so ``tensorboard --logdir runs/`` shows local and
cluster runs side by side and the notebooks read both backends through one reader
(``recipe.reporting.metrics_reader``). NeMo-RL's logger prefixes the algorithm's step metrics with ``train/``
(``logger.log_metrics(metrics, step, prefix="train")``), validation with ``validation/`` and timings with
``timing/train/``; the metric names below are the ones its GRPO / distillation loops log, where one carries the
same quantity. A local key without a NeMo-RL counterpart keeps its own name under ``train/`` (never dropped).
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

# local metrics.jsonl key -> NeMo-RL v0.7.0 TensorBoard tag
NEMO_RL_TAGS: dict[str, str] = {
    "loss": "train/loss",
    "reward_mean": "train/reward",
    "grad_norm": "train/grad_norm",
    "lr": "train/lr",
    "kl": "train/kl_penalty",                 # GRPO's KL-to-reference term
    "ratio_mean": "train/probs_ratio",        # pi_train / pi_inference on trained tokens
    "tokens": "train/global_valid_toks",
    "response_tokens_mean": "train/mean_gen_tokens_per_sample",
    "time_s": "timing/train/total_step_time",
    "gen_time_s": "timing/train/generation",
}
NOT_SCALARS = {"step", "updated", "job", "source"}
EVENTS_NAME = "events.out.tfevents.local"


def tag_for(key: str) -> str:
    if key in NEMO_RL_TAGS:
        return NEMO_RL_TAGS[key]
    return key if key.startswith(("train/", "validation/", "timing/")) else f"train/{key}"


def events_dir(stage_dir: Path) -> Path:
    return Path(stage_dir) / "tensorboard"


def _event_bytes(step: int, scalars: dict[str, float], wall_time: float) -> bytes:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=t, simple_value=v) for t, v in scalars.items()])
    return event_pb2.Event(wall_time=wall_time, step=step, summary=summary).SerializeToString()


def _header_bytes() -> bytes:
    from tensorboard.compat.proto import event_pb2
    return event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2").SerializeToString()


def row_scalars(row: dict) -> dict[str, float]:
    out = {}
    for k, v in row.items():
        if k in NOT_SCALARS or isinstance(v, str) or v is None:
            continue
        if isinstance(v, (bool, int, float)):
            out[tag_for(k)] = float(v)
    return out


def _write(path: Path, rows: list[dict], mode: str, sync: bool) -> None:
    from tensorboard.summary.writer.record_writer import RecordWriter
    path.parent.mkdir(parents=True, exist_ok=True)
    new = mode == "wb" or not path.exists()
    with open(path, "wb" if new else "ab") as f:
        w = RecordWriter(f)
        if new:
            w.write(_header_bytes())
        for r in rows:
            if "step" in r:
                w.write(_event_bytes(int(r["step"]), row_scalars(r), time.time()))
        f.flush()
        if sync:
            os.fsync(f.fileno())


def append_row(stage_dir: Path, row: dict) -> None:
    _write(events_dir(stage_dir) / EVENTS_NAME, [row], "ab", sync=False)  # as metrics.jsonl (RunDir.append_metrics)


def rewrite(stage_dir: Path, rows: list[dict]) -> None:
    """Replace the stage's event file by ``rows`` (after a resume truncated metrics.jsonl)."""
    path = events_dir(stage_dir) / EVENTS_NAME
    tmp = path.with_name(f".{EVENTS_NAME}.{socket.gethostname()}.{os.getpid()}.tmp")
    _write(tmp, rows, "wb", sync=True)
    os.replace(tmp, path)
