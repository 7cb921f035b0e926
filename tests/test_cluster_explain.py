"""`recipe cluster render --stage all --explain`: per job the nodes/GPUs by role, entry script, container, mounts,
environment (secrets by name only), segments with expected wall time and log locations, read from the rendered
files."""
from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from recipe.cli.cluster_cmd import app

HUB_DL = "hub.download_dir=" + str(Path(__file__).parent / "fixtures/cluster/hub_downloads")
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "cluster.account=acct", "cluster.partition=batch",
             "cluster.hf_home=/shared/hf", "cluster.swe_container_formatter=/shared/sif/{instance_id}.sif",
             "cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch"]
JOBS = ["sft", "if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl",
        "swe_rl_agentless", "swe_rl_agentic"]


def _section(text: str, job: str) -> str:
    m = re.search(rf"^== {job} \(\w+\) ==\n(.*?)(?=^== |\Z)", text, re.M | re.S)
    assert m, job
    return m.group(1)


def test_render_all_explains_every_job(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_TOKEN", "hf_do_not_print_me")
    r = CliRunner().invoke(app, ["render", "--stage", "all", "--run-id", "ex", "--profile", "paper", "--allow-unpinned",
                                 "--allow-dirty", "--explain", *[a for o in OVERRIDES for a in ("-s", o)]])
    assert r.exit_code == 0, r.output
    assert "hf_do_not_print_me" not in r.output
    run = tmp_path / "runs" / "ex"
    for job in JOBS:
        sec = _section(r.output, job)
        assert "run_sft.py" in sec if job == "sft" else "examples/nemo_gym/run_grpo_nemo_gym.py" in sec
        assert "container: nvcr.io#nvidia/nemo-rl:" in sec and "/shared/hf" in sec.split("mounts")[1]
        assert "HF_HOME=/shared/hf" in sec and "NRL_MEGATRON_CHECKPOINT_DIR=/shared/hf/nemo_rl" in sec
        assert re.search(r"segments: \d+ segment\(s\), ~[\d.]+ h expected", sec), sec
        stage = "swe_rl" if job.startswith("swe_rl") else job
        stage_dir = next(run.glob(f"[0-9][0-9]_{stage}"))
        assert f"{stage_dir}/nemo_rl/" in sec and "/slurm_logs/<jobid>-logs/ray-driver.log" in sec
    assert "secrets from your shell, by name only: HF_TOKEN" in _section(r.output, "sft")
    mopd = _section(r.output, "mopd")   # the 16-node layout (8 + 5 + 3) plus the GenRM's 2 nodes
    for role in (r"policy .*: 8 node\(s\), 64 GPUs", r"generation .*: 5 node\(s\)", r"teachers .*: 3 node\(s\)",
                 r"judge genrm .*: 2 node\(s\)", r"total: 18 node\(s\)"):
        assert re.search(role, mopd), (role, mopd)
    lc = _section(r.output, "long_context_rl")
    assert re.search(r"judge long_context_judge \(Qwen/Qwen3-235B-A22B-Instruct-2507.*1 node\(s\)", lc)
    assert "judge" not in _section(r.output, "swe_rl_agentless")        # no judge node nothing calls
    assert "/shared/sif" in _section(r.output, "swe_rl_agentic").split("mounts")[1]
    from recipe.cluster.segments import plan_segments
    from recipe.config import load_config

    cfg = load_config("paper", overrides=OVERRIDES)
    cl = cfg.cluster
    want = plan_segments(cfg.stage("sft").steps, cl.stages["sft"].step_time_s, cl.time_limit,
                         cl.checkpoint_must_save_by_margin_min, cl.segment_startup_s).segments
    assert want > 3 and f"segments: {want} segment(s)" in _section(r.output, "sft")   # SFT's steps need many
