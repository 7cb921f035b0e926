"""What a rendered job will run, in words (``recipe cluster render --explain``): per job the nodes and GPUs by role
(policy, generation, teachers, judges), the entry script, the container, the mounts, the environment (secrets by
name only), the segments with the expected wall time, and where its logs land.

Everything is read back from the render's own outputs (``provenance.json``, the launch script), so the explanation is
of the files that would be submitted. Log locations follow NeMo-RL v0.7.0's ``ray.sub``: ``LOG_DIR`` is
``$BASE_LOG_DIR/<jobid>-logs`` (``<jobid>-<restart>-logs`` after a Slurm requeue), holding ``ray-driver.log`` (the
entry point's output), ``ray-head.log`` and one ``ray-worker-<n>.log`` per node.
"""
from __future__ import annotations

import json
from typing import Any

from recipe.cluster.release import CONTAINER_SOURCE_DIR
from recipe.cluster.startup import launch_facts

SECRETS = ("HF_TOKEN",)   # exported by the user before launching; never written into a rendered file


def _roles(cfg, job_name: str, prov: dict[str, Any]) -> list[str]:
    res = cfg.cluster.resources(job_name)
    gpn = prov["gpus_per_node"]
    gen = res.generation_nodes or 0
    policy = res.nodes - gen
    p = res.parallelism
    lines = [f"policy (Megatron TP{p.tensor} PP{p.pipeline} CP{p.context} EP{p.expert}): {policy} node(s), "
             f"{policy * gpn} GPUs" + ("" if gen or prov["kind"] == "sft" else f"; vLLM generation (TP{p.vllm_tensor}) "
                                                                            f"colocated on them")]
    if gen:
        lines.append(f"generation (vLLM TP{p.vllm_tensor}, non-colocated): {gen} node(s), {gen * gpn} GPUs")
    if prov.get("teacher_nodes"):
        t = res.teachers
        lines.append(f"teachers (one group per distinct checkpoint, TP{t.tensor} CP{t.context} EP{t.expert}): "
                     f"{prov['teacher_nodes']} node(s), {prov['teacher_nodes'] * gpn} GPUs")
    for name, j in (prov.get("judges") or {}).items():
        lines.append(f"judge {name} ({j['model']}, vLLM TP{j['tensor']} x DP{j['data_parallel']}, served by Gym): "
                     f"{j['nodes']} node(s), {j['nodes'] * gpn} GPUs")
    lines.append(f"total: {prov['nodes']} node(s) x {gpn} GPUs = {prov['nodes'] * gpn} GPUs per segment")
    return lines


def explain_job(cfg, job, prov: dict[str, Any]) -> str:
    """The explanation of one rendered job (``RenderResult.jobs`` entry with its provenance record)."""
    launch_text = job.launch_path.read_text()
    facts = launch_facts(launch_text)
    env = {k: v for k, v in facts.env.items() if k not in ("CONTAINER", "MOUNTS", "BASE_LOG_DIR", "COMMAND")}
    secrets = [s for s in SECRETS if f"${{{s}:?" in launch_text]
    log = facts.env.get("BASE_LOG_DIR", job.log_dir)
    out = [f"== {job.name} ({job.kind}) =="]
    out += ["nodes and GPUs by role:"] + [f"  {line}" for line in _roles(cfg, job.name, prov)]
    out += [f"entry script: {CONTAINER_SOURCE_DIR}/{prov['entry_point']} --config {job.config_path}",
            f"  (after the code snapshot's fingerprint check; each segment ends with {job.convert_path.name} --check)",
            f"container: {facts.env.get('CONTAINER', '?')}",
            "mounts (paths in the container): $PWD (the submit directory), " + ", ".join(facts.mounts),
            "environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) or "(none)")
            + (f"; secrets from your shell, by name only: {', '.join(secrets)}" if secrets else "")]
    seg = job.segments
    out.append(f"segments: {seg.describe() if seg else '1'} of at most {prov['time_limit']} each; then the "
               f"conversion ({job.convert_path.name}) as a one-node job -> {job.hf_out}")
    out += [f"logs: {log}/<jobid>-segment.out (sbatch), {log}/<jobid>-logs/ray-driver.log (the entry point; "
            f"<jobid>-<restart>-logs after a requeue), ray-head.log and ray-worker-<n>.log beside it,",
            f"      {log}/<jobid>-convert.out (conversion), TensorBoard under {prov['log_dir']}"]
    return "\n".join(out)


def explain(cfg, result) -> str:
    """Every job of one stage's render (``RenderResult``)."""
    prov = json.loads(result.provenance_path.read_text())["jobs"]
    return "\n\n".join(explain_job(cfg, job, prov[job.name]) for job in result.jobs)
