"""Start-up rules (recipe.cluster.startup): every rendered paper job passes them, and each rule refuses a job that
breaks it, naming the server, the key and the pinned source file. Also: `render --check` refuses a judge with empty
vllm_serve_env_vars, render refuses without a shared cache, and the image's prefetch covers every Gym server a job
starts (the jobs build no venv)."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recipe.cluster import gym_refs, startup
from recipe.cluster.nrl_yaml import dump_yaml, load_yaml
from recipe.cluster.render import render_stage
from recipe.config import load_config
from recipe.runs.layout import RunDir

HUB_DL = "hub.download_dir=" + str(Path(__file__).parent / "fixtures/cluster/hub_downloads")
SIF = "/shared/sif"
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "cluster.account=acct", "cluster.partition=batch",
             "cluster.hf_home=/shared/hf", f"cluster.swe_container_formatter={SIF}/sweb.eval.x86_64.{{instance_id}}.sif"]
STAGES = ("sft", "if_rl", "rlhf", "long_context_rl", "code_rl", "swe_rl")
SKELETON = gym_refs.GymConfigs(None)     # the pinned Gym d67ad661 table, whatever checkout the machine has


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    cfg = load_config("paper", overrides=OVERRIDES)
    run = RunDir(tmp_path_factory.mktemp("startup") / "run")
    out = {}
    for s in STAGES:
        for job in render_stage(cfg, run, s, allow_unpinned=True, allow_dirty=True).jobs:
            out[job.name] = job
    return out


def _problems(job, edit_cfg=None, edit_launch=None) -> list[str]:
    cfg = copy.deepcopy(load_yaml(job.config_path))
    text = job.launch_path.read_text()
    if edit_cfg:
        edit_cfg(cfg)
    if edit_launch:
        text = edit_launch(text)
    return startup.job_problems(cfg, text, SKELETON)


def _server(cfg, inst, impl):
    return cfg["env"]["nemo_gym"][inst]["responses_api_models"][impl]


def test_every_rendered_job_starts(jobs):
    assert startup.check_jobs(jobs.values(), SKELETON) == []
    assert startup.check_jobs(jobs.values()) == []            # with whatever Gym configs GymConfigs.find() sees
    # the rendered facts the rules read
    lc = load_yaml(jobs["long_context_rl"].config_path)
    judge = _server(lc, "judge_model", "local_vllm_model")
    assert judge["vllm_serve_env_vars"] == {"VLLM_RAY_DP_PACK_STRATEGY": "strict"}
    assert judge["hf_home"] == "/shared/hf"
    assert judge["vllm_serve_kwargs"]["max_model_len"] == 60000
    assert judge["vllm_serve_kwargs"]["gpu_memory_utilization"] == 0.85
    genrm = _server(load_yaml(jobs["rlhf"].config_path), "genrm_model", "genrm_model")
    assert genrm["vllm_serve_kwargs"]["max_model_len"] == 60000 and genrm["hf_home"] == "/shared/hf"
    agentic = load_yaml(jobs["swe_rl_agentic"].config_path)["env"]["nemo_gym"]
    assert agentic["use_absolute_ip"] is True and agentic["skip_venv_if_present"] is True
    launch = startup.launch_facts(jobs["swe_rl_agentic"].launch_path.read_text())
    assert launch.mounted(f"{SIF}/x.sif") and launch.env["HF_HOME"] == "/shared/hf"
    assert launch.env["NRL_MEGATRON_CHECKPOINT_DIR"] == "/shared/hf/nemo_rl"


def _drop_mount(path):
    return lambda t: t.replace(f",{path}:{path}", "")


def _drop_export(key):
    return lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith(f"export {key}="))


LOCAL = "responses_api_models/local_vllm_model/app.py"
CASES = [   # (job, config edit, launch edit, fragments the message must hold: server, key, source)
    ("long_context_rl", lambda c: _server(c, "judge_model", "local_vllm_model").update(vllm_serve_env_vars={}), None,
     ["judge_model (local_vllm_model)", "VLLM_RAY_DP_PACK_STRATEGY", LOCAL]),
    ("rlhf", lambda c: _server(c, "genrm_model", "genrm_model")["vllm_serve_kwargs"].update(tensor_parallel_size=0),
     None, ["genrm_model (genrm_model)", "vllm_serve_kwargs.tensor_parallel_size", LOCAL]),
    ("rlhf", lambda c: _server(c, "genrm_model", "genrm_model")["vllm_serve_kwargs"].update(tensor_parallel_size=16),
     None, ["genrm_model (genrm_model)", "VLLM_RAY_DP_PACK_STRATEGY=strict", "use span", LOCAL]),
    ("long_context_rl", lambda c: _server(c, "judge_model", "local_vllm_model").update(hf_home=None), None,
     ["judge_model (local_vllm_model)", "hf_home is not set", LOCAL]),
    ("rlhf", lambda c: _server(c, "genrm_model", "genrm_model")["vllm_serve_kwargs"].pop("max_model_len"), None,
     ["genrm_model (genrm_model)", "vllm_serve_kwargs.max_model_len", "stage3_rlhf.yaml"]),
    ("long_context_rl", None, _drop_mount("/shared/hf"),
     ["judge_model (local_vllm_model): hf_home /shared/hf is not under a mount", "launch.sh: HF_HOME=/shared/hf",
      "nemo_rl/models/policy/utils.py"]),
    ("if_rl", None, _drop_export("NRL_MEGATRON_CHECKPOINT_DIR"),
     ["launch.sh: NRL_MEGATRON_CHECKPOINT_DIR is not exported", "nemo_rl/models/policy/utils.py"]),
    ("sft", None, _drop_export("HF_HOME"), ["launch.sh: HF_HOME is not exported"]),
    ("if_rl", lambda c: c["data"]["train"].update(data_path="/elsewhere/train.jsonl"), None,
     ["data.train.data_path: /elsewhere/train.jsonl is not under a mount", "ray.sub"]),
    ("code_rl", lambda c: c["env"]["nemo_gym"].pop("skip_venv_if_present"), None,
     ["env.nemo_gym.skip_venv_if_present", "nemo_gym/global_config.py"]),
    ("swe_rl_agentic", lambda c: c["env"]["nemo_gym"].pop("use_absolute_ip"), None,
     ["env.nemo_gym.use_absolute_ip", "nemo_gym/global_config.py"]),
    ("swe_rl_agentic", None, _drop_mount(SIF),
     ["swe_agents_train (swe_agents)", f"the .sif folder {SIF}", "responses_api_agents/swe_agents/app.py"]),
    ("swe_rl_agentic", lambda c: c["env"]["nemo_gym"]["swe_agents_val"]["responses_api_agents"]["swe_agents"].update(
        container_formatter="docker://swebench/{instance_id}"), None,
     ["swe_agents_val (swe_agents)", "container_formatter", "responses_api_agents/swe_agents/app.py"]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_startup_rule_refuses_a_job_that_breaks_it(jobs, case):
    name, edit_cfg, edit_launch, fragments = case
    assert _problems(jobs[name]) == []                                   # the rendered job passes ...
    problems = _problems(jobs[name], edit_cfg, edit_launch)              # ... the broken one is refused
    for frag in fragments:
        assert any(frag in p for p in problems), (frag, problems)


def test_render_check_refuses_an_empty_vllm_serve_env_vars(shared_dir, tmp_path, monkeypatch):
    """`recipe cluster render --check` applies the start-up rules: the judge as rendered before (env vars {})."""
    from recipe.cli.cluster_cmd import app
    from recipe.cluster import gym

    monkeypatch.setenv("RECIPE_NEMO_RL_DIR", str(shared_dir / "fixtures/nemo_rl_configs/v0.7.0"))
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    argv = ["render", "--stage", "long_context_rl", "--run-id", "chk", "--profile", "paper", "--allow-unpinned",
            "--allow-dirty", "--check", *[a for o in OVERRIDES for a in ("-s", o)]]
    ok = CliRunner().invoke(app, argv)
    assert ok.exit_code == 0 and "start-up rules" in ok.output, ok.output
    real = gym._local_vllm
    monkeypatch.setattr(gym, "_local_vllm", lambda j, h: {**real(j, h), "vllm_serve_env_vars": {}})
    bad = CliRunner().invoke(app, argv[:4] + ["chk2"] + argv[5:])
    assert bad.exit_code == 1, bad.output
    text = re.sub(r"\s+", " ", bad.output)
    assert "invalid: long_context_rl: Gym server judge_model (local_vllm_model): " \
           "vllm_serve_env_vars.VLLM_RAY_DP_PACK_STRATEGY is not set" in text and LOCAL in text


def test_render_refuses_without_a_shared_cache(tmp_path):
    cfg = load_config("paper", overrides=[o for o in OVERRIDES if not o.startswith("cluster.hf_home")])
    with pytest.raises(ValueError, match=r"cluster\.hf_home is not set.*--set cluster\.hf_home="):
        render_stage(cfg, RunDir(tmp_path / "h"), "if_rl", allow_unpinned=True, allow_dirty=True)


def _servers(nemo_gym: dict) -> set[tuple[str, str]]:
    merged = gym_refs.merged_config(nemo_gym, SKELETON)
    return {(kind, impl) for v in merged.values() if isinstance(v, dict)
            for kind in gym_refs.SERVER_TYPES for impl in (v.get(kind) or {})}


def test_image_prefetch_covers_every_gym_server_a_job_starts(jobs):
    """The jobs run with skip_venv_if_present: every server implementation (judges included) needs its venv in
    the image, built from containers/gym_envs.yaml."""
    from recipe.cluster.gym import prefetch_text

    prefetched = _servers(load_yaml(prefetch_text())["env"]["nemo_gym"])
    for name, job in jobs.items():
        ng = (load_yaml(job.config_path).get("env") or {}).get("nemo_gym")
        if ng:
            assert _servers(ng) <= prefetched, (name, _servers(ng) - prefetched)
    assert ("responses_api_models", "local_vllm_model") in prefetched
    assert ("responses_api_models", "genrm_model") in prefetched
    assert (Path(__file__).parents[1] / "containers/gym_envs.yaml").read_text() == prefetch_text()
