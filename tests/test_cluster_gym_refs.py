"""NeMo-Gym's config-parser rules (recipe.cluster.gym_refs) applied to rendered jobs: every server reference in the
merged Gym config is defined. NVIDIA's own v0.7.0 Gym configs pass, the RLHF render without the reasoning-off policy
server (what genrm_compare.yaml's second agent needs) is refused with the server named, and so is any dangling
reference."""
from __future__ import annotations

import copy

import pytest

from recipe.cluster import gym, gym_refs
from recipe.cluster.nrl_yaml import load_yaml, resolve
from recipe.cluster.render import render_stage
from recipe.cluster.config_checks import gym_problems
from recipe.config import load_config
from recipe.data.gym_envs import DOMAIN_GYM, PHASE_GYM
from recipe.runs.layout import RunDir

HUB_DL = "hub.download_dir=" + str(__import__("pathlib").Path(__file__).parent / "fixtures/cluster/hub_downloads")
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "cluster.account=acct", "cluster.partition=batch", "cluster.hf_home=/shared/hf",
             "cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch",
             "cluster.swe_container_formatter=/shared/sif/sweb.eval.x86_64.{instance_id}.sif"]
PINNED = gym_refs.GymConfigs(None)   # the transcribed skeletons only, whatever the environment holds
RLHF_JOBS = ("rlhf_branch", "mopd", "rlhf")


@pytest.fixture(scope="module")
def gym_jobs(tmp_path_factory):
    """rlhf_branch, mopd (teachers deferred, as in the chain) and rlhf of the paper profile, rendered."""
    cfg = load_config("paper", overrides=OVERRIDES)
    run = RunDir(tmp_path_factory.mktemp("g") / "run")
    return {s: render_stage(cfg, run, s, allow_unpinned=True, allow_dirty=True, defer_teachers=(s == "mopd"))
            for s in RLHF_JOBS}


def _ng(path) -> dict:
    return load_yaml(path)["env"]["nemo_gym"]


def test_rlhf_jobs_define_the_reasoning_off_server_and_pass_gyms_rules(gym_jobs):
    for stage in RLHF_JOBS:
        ng = _ng(gym_jobs[stage].jobs[0].config_path)
        assert gym.GENRM_CONFIG in ng["config_paths"], stage
        off = ng["policy_model_reasoning_off"]
        assert off["_copy"] == "policy_model"    # as NVIDIA's stage3_rlhf.yaml: a copy of the policy server
        assert off["responses_api_models"]["vllm_model"]["chat_template_kwargs"]["enable_thinking"] is False
        assert gym_refs.problems(ng, PINNED) == [], stage
        merged = gym_refs.merged_config(ng, PINNED)
        # the copy carries the policy server's connection and its own thinking-off settings
        vm = merged["policy_model_reasoning_off"]["responses_api_models"]["vllm_model"]
        assert vm["base_url"] == "${policy_base_url}" and vm["sequential_reasoning_allowed"] is False


def test_todays_rlhf_render_without_the_server_is_refused_naming_it(gym_jobs):
    for stage in RLHF_JOBS:
        cfg = load_yaml(gym_jobs[stage].jobs[0].config_path)
        del cfg["env"]["nemo_gym"]["policy_model_reasoning_off"]   # the render before the fix
        problems = gym_problems(cfg, PINNED)
        assert len(problems) == 1, (stage, problems)
        assert ("In server instance 'genrm_simple_agent_reasoning_off', field 'model_server' references "
                "responses_api_models/'policy_model_reasoning_off', which is not defined") in problems[0], problems


def test_a_dangling_reference_fails(gym_jobs):
    ng = _ng(gym_jobs["rlhf"].jobs[0].config_path)
    bad = copy.deepcopy(ng)
    bad["genrm_compare_resources_server"]["resources_servers"]["genrm_compare"]["genrm_model_server"] = {
        "type": "responses_api_models", "name": "genrm_modle"}
    problems = gym_refs.problems(bad, PINNED)
    assert len(problems) == 1 and "'genrm_compare_resources_server', field 'genrm_model_server'" in problems[0]
    assert "'genrm_modle'" in problems[0] and "genrm_model" in problems[0].split("defined responses_api_models:")[1]
    # an agent pointing at a resources server that no config defines
    bad = copy.deepcopy(ng)
    bad["genrm_simple_agent"] = {"responses_api_agents": {"simple_agent": {"resources_server": {
        "type": "resources_servers", "name": "genrm_compare"}}}}
    assert any("field 'resources_server' references resources_servers/'genrm_compare'" in p
               for p in gym_refs.problems(bad, PINNED))


def test_parser_rules_beyond_references():
    base = {"config_paths": [gym.VLLM_FOR_TRAINING, DOMAIN_GYM["math"].config_path]}
    assert gym_refs.problems(base, PINNED) == []
    # a config path the pinned Gym does not have
    assert "not a config of NeMo-Gym" in gym_refs.problems({"config_paths": ["resources_servers/x/configs/x.yaml"]},
                                                           PINNED)[0]
    # _copy of a path that does not exist
    p = gym_refs.problems({**base, "m2": {"_copy": "policy_modle"}}, PINNED)
    assert p and "'policy_modle' does not exist" in p[0]
    # _inherit_from moves the server: the agents that referenced the source now dangle
    p = gym_refs.problems({**base, "m2": {"_inherit_from": "policy_model"}}, PINNED)
    assert p and all("'policy_model', which is not defined" in x for x in p) and len(p) == 2
    # a resources server without a domain looks like a server but is not one
    p = gym_refs.problems({**base, "r": {"resources_servers": {"x": {"entrypoint": "app.py"}}}}, PINNED)
    assert p == ["'r' looks like a server but a resources server needs a domain (AlmostServerError)"]
    # Gym's mandatory values left unset
    swe = {"config_paths": [gym.VLLM_FOR_TRAINING, PHASE_GYM["agentic"]["swe"].config_path]}
    p = gym_refs.problems(swe, PINNED)
    assert sorted(x.split(":")[0] for x in p) == sorted(
        f"{i}.responses_api_agents.swe_agents.{k}" for i in ("swe_agents_train", "swe_agents_val")
        for k in ("container_formatter", "dataset_path"))


def test_prefetch_config_parses_too():
    ng = load_yaml(gym.prefetch_text())["env"]["nemo_gym"]
    assert gym_refs.problems(ng, PINNED) == []


# --- NVIDIA's genuine configs (../shared fixtures) -------------------------------------------------------------

def _fixture_ng(shared_dir, name: str) -> dict:
    cfg = load_yaml(shared_dir / "fixtures/nemo_rl_configs/v0.7.0" / name)
    return resolve(cfg, env={"PERSISTENT_CACHE": "/cache", "HF_HOME": "/hf"})["env"]["nemo_gym"]


@pytest.mark.parametrize("name", ["examples__nemo_gym__grpo_nanov3.yaml",
                                  "examples__nemo_gym__nemotron-3-super__stage3_rlhf.yaml"])
def test_nvidias_configs_pass_the_same_rules(shared_dir, name):
    ng = _fixture_ng(shared_dir, name)
    assert gym_refs.problems(ng, PINNED) == []
    genuine = gym_refs.GymConfigs(shared_dir / "fixtures/nemo_rl_configs")   # genrm_compare.yaml byte for byte
    assert gym_refs.problems(ng, genuine) == []
    if "stage3_rlhf" in name:   # without its reasoning-off server, NVIDIA's config fails exactly like ours did
        del ng["policy_model_reasoning_off"]
        for src in (PINNED, genuine):
            p = gym_refs.problems(ng, src)
            assert len(p) == 1 and "'policy_model_reasoning_off', which is not defined" in p[0]


def test_pinned_genrm_skeleton_matches_gyms_file(shared_dir):
    """The transcribed skeleton of genrm_compare.yaml has the genuine file's servers, types and references."""
    genuine = gym_refs.GymConfigs(shared_dir / "fixtures/nemo_rl_configs")
    assert genuine.file(gym.GENRM_CONFIG) is not None

    def shape(cfg):
        out = {}
        for name, value in cfg.items():
            inst, _ = gym_refs._instance(value)
            if inst:
                kind, impl, block = inst
                out[name] = (kind, impl, block.get("domain"),
                             {f: gym_refs._as_ref(v) for f, v in block.items() if gym_refs._as_ref(v)})
        return out

    assert shape(genuine.load(gym.GENRM_CONFIG)) == shape(PINNED.load(gym.GENRM_CONFIG))
    assert len(shape(PINNED.load(gym.GENRM_CONFIG))) == 4


def test_rendered_jobs_pass_with_gyms_genuine_genrm_file(gym_jobs, shared_dir):
    genuine = gym_refs.GymConfigs(shared_dir / "fixtures/nemo_rl_configs")
    for stage in RLHF_JOBS:
        assert gym_refs.problems(_ng(gym_jobs[stage].jobs[0].config_path), genuine) == [], stage
