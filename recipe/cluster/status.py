"""Read a running/finished NeMo-RL stage back into the run layout (``recipe cluster status``).

Inputs, per job of the stage (paths recorded in the render's provenance): the checkpoint dir
(``step_N/training_info.json``, ``step_N/config.yaml``; ``tmp_step_N`` is half-written and ignored — NEMO_RL.md §7),
the TensorBoard event files under ``logger.log_dir`` (the render enables TensorBoard), and the converted HF
checkpoint. Outputs, the same files the local backend writes:

* ``metrics.jsonl``   one row per (job, step): every TensorBoard scalar of that step plus the local backend's
                      names (``loss``, ``reward_mean``, ``grad_norm``, ``lr``; ``ALIASES``), rewritten each time so
                      repeated calls never duplicate rows;
* ``validation.json`` per-domain scores from the newest step with ``validation/…`` scalars: a tag containing the
                      domain's Gym agent name (``validation/<agent>/…``, accuracy or reward preferred) gives that
                      domain's score, ``validation/total_reward/mean`` or ``validation/accuracy`` the ``all`` score.
                      The ``validation/`` prefix is checked against v0.7.0's source (``nemo_rl/algorithms/grpo.py``:
                      ``logger.log_metrics(val_metrics, step, prefix="validation")``); the per-agent metric names
                      inside it come from NeMo-Gym and are matched by agent name; unmatched domains are left out
                      rather than guessed;
* ``manifest.json``   status ``pending`` → ``running`` (a step or event exists) → ``done`` (the final job's HF folder
                      has config.json + safetensors), progress per job, newest training_info;
* ``scores.json`` / ``teachers.json`` through ``recipe.runs.teachers.record_scores`` once the stage is done,
                      so MOPD's teacher slots resolve exactly as with the local backend.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from recipe.cluster.resume import step_dirs
from recipe.data.gym_envs import DOMAIN_GYM, PHASE_GYM
from recipe.runs.layout import RunDir, write_text_atomic


# Local-backend metric names (recipe/train) -> NeMo-RL TensorBoard tags that carry the same quantity, first
# present wins [inferred tag names], so notebook plots read both backends' metrics.jsonl alike.
ALIASES: dict[str, tuple[str, ...]] = {
    "loss": ("train/loss",),
    "reward_mean": ("train/reward", "train/total_reward/mean", "train/reward/mean"),
    "grad_norm": ("train/grad_norm",),
    "lr": ("train/lr",),
}


def _aliases(tags: dict[str, float]) -> dict[str, float]:
    out = {}
    for name, cands in ALIASES.items():
        for t in cands:
            if t in tags:
                out[name] = tags[t]
                break
    return out


def read_scalars(log_dir: Path) -> dict[int, dict[str, float]]:
    """step -> {tag: value} from every TensorBoard event file under ``log_dir`` (later files win on clashes)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[int, dict[str, float]] = defaultdict(dict)
    files = sorted(Path(log_dir).rglob("events.out.tfevents.*"), key=lambda p: p.stat().st_mtime) if Path(log_dir).is_dir() else []
    for f in files:
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            for ev in acc.Scalars(tag):
                out[int(ev.step)][tag] = float(ev.value)
    return dict(out)


def _domain_scores(scalars: dict[int, dict[str, float]], domains: list[str]) -> tuple[dict[str, float], int | None]:
    val_steps = [s for s, tags in scalars.items() if any(t.startswith("validation/") for t in tags)]
    if not val_steps:
        return {}, None
    step = max(val_steps)
    tags = {t: v for t, v in scalars[step].items() if t.startswith("validation/")}
    scores: dict[str, float] = {}

    def pick(cands: list[str]) -> str | None:
        for pref in ("accuracy", "reward/mean", "reward"):
            for t in sorted(cands):
                if t.endswith(pref) or pref in t:
                    return t
        return sorted(cands)[0] if cands else None

    for d in domains:
        agents = {DOMAIN_GYM[d].agent} if d in DOMAIN_GYM else set()
        agents |= {t[d].agent for t in PHASE_GYM.values() if d in t}
        t = pick([t for t in tags if any(f"/{a}/" in t for a in agents)])
        if t:
            scores[d] = tags[t]
    for t in ("validation/total_reward/mean", "validation/accuracy"):
        if t in tags:
            scores["all"] = tags[t]
            break
    return scores, step


def _hf_complete(path: Path) -> bool:
    return (path / "config.json").is_file() and any(path.glob("*.safetensors"))


def collect(run: RunDir, stage: str) -> dict[str, Any]:
    """Update ``stage``'s manifest.json / metrics.jsonl / validation.json from NeMo-RL outputs; returns the manifest."""
    manifest = run.read_manifest(stage)
    if not manifest or "cluster" not in manifest:
        raise FileNotFoundError(f"{run.manifest_path(stage)} has no cluster render; run `recipe cluster render "
                                f"--run-id {run.run_id} --stage {stage}` first")
    jobs = {k: v for k, v in manifest["cluster"]["jobs"].items() if k != "teachers"}
    rows: list[dict] = []
    progress: dict[str, Any] = {}
    any_activity = False
    last_scores: dict[str, float] = {}
    last_val_step = None
    for name, job in jobs.items():
        steps = step_dirs(Path(job["checkpoint_dir"]))
        latest = max(steps) if steps else None
        info = None
        if latest is not None:
            p = steps[latest] / "training_info.json"
            info = json.loads(p.read_text()) if p.is_file() else None
        scalars = read_scalars(Path(job["log_dir"]))
        for step in sorted(scalars):
            rows.append({"step": step, "job": name, "source": "nemo_rl", **scalars[step], **_aliases(scalars[step])})
        scores, val_step = _domain_scores(scalars, job.get("domains", []))
        if scores:
            last_scores, last_val_step = scores, val_step
        any_activity |= bool(steps) or bool(scalars)
        max_steps = job.get("max_steps")
        progress[name] = {
            "checkpoint_steps": sorted(steps), "latest_checkpoint_step": latest,
            "latest_logged_step": max(scalars) if scalars else None, "max_steps": max_steps,
            "fraction": (latest / max_steps) if (latest is not None and max_steps) else None,
            "training_info": info, "hf_checkpoint": job["hf_checkpoint"],
            "converted": _hf_complete(Path(job["hf_checkpoint"])),
        }
    final = list(jobs.values())[-1]
    done = _hf_complete(Path(final["hf_checkpoint"]))
    write_text_atomic(run.metrics_path(stage), "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    if last_scores:
        run.write_validation(stage, last_scores, step=last_val_step, source="nemo_rl_tensorboard")
    status = "done" if done else ("running" if any_activity else manifest.get("status", "pending"))
    if status == "done":  # the manifest is written last: outputs first
        manifest["outputs"] = {"checkpoint": final["hf_checkpoint"]}
        if last_scores:  # teacher selection as in the local backend (scores.json, teachers.json)
            from recipe.runs.teachers import record_scores

            record_scores(run, stage, {d: v for d, v in last_scores.items() if d != "all"})
    manifest.update({"status": status, "progress": progress,
                     "metrics_summary": rows[-1] if rows else None})
    run.write_manifest(stage, manifest)
    return manifest
