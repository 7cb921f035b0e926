"""The validator checks rendered jobs against NeMo-RL v0.7.0's config classes (types, '???', top-level-only
_override_), the genuine v0.7.0 configs pass it, and each rendering fix holds, with the input that slipped through
before refused."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from recipe.cluster.nrl_yaml import dump_yaml, load_yaml
from recipe.cluster.release import RELEASE_CONFIGS, ReleaseTree
from recipe.cluster.render import render_cascade, render_stage
from recipe.cluster.config_checks import check_file, check_render, type_problems
from recipe.config import STAGE_PLAN, load_config
from recipe.data.gym_envs import agent_for
from recipe.runs.layout import RunDir

HUB_DL = "hub.download_dir=" + str(__import__("pathlib").Path(__file__).parent / "fixtures/cluster/hub_downloads")  # stand-in released tokenizer download
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "cluster.account=acct", "cluster.partition=batch", "cluster.hf_home=/shared/hf",
             "cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch",
             "cluster.swe_container_formatter=/shared/sif/sweb.eval.x86_64.{instance_id}.sif"]


@pytest.fixture(scope="module")
def tree(shared_dir):
    return ReleaseTree.find(shared_dir / "fixtures/nemo_rl_configs/v0.7.0")


@pytest.fixture(scope="module")
def paper():
    return load_config("paper", overrides=OVERRIDES)


@pytest.fixture(scope="module")
def rendered(paper, tmp_path_factory):
    from recipe.runs.teachers import record_selection

    run = RunDir(tmp_path_factory.mktemp("v") / "run")
    out = {}
    for s in STAGE_PLAN:
        if s == "mopd":
            for done in ("sft", "if_rl", "multi_domain_rl", "rlhf_branch"):
                run.write_manifest(done, {**(run.read_manifest(done) or {}), "status": "done"})
            group = ("instruction_following", "mcqa", "workplace_tools", "structured_output")
            for st, x in (("if_rl", 0.6), ("multi_domain_rl", 0.7)):
                record_selection(run, st, {"final": {"step": 10, "checkpoint": f"/ckpt/{st}", "scores": {
                    d: {"score": x, "ci_low": x - 0.05, "ci_high": x + 0.05, "n": 500} for d in group}}})
        out[s] = render_cascade(paper, run, stages=[s], allow_unpinned=True, allow_dirty=True)[0]
    return run, out


def test_genuine_v070_configs_pass_the_validator(tree):
    for orig in RELEASE_CONFIGS:
        assert check_file(tree.path(orig), tree, env={"HF_HOME": "/hf"}) == [], orig


def test_every_rendered_stage_passes(rendered, tree):
    _, res = rendered
    jobs = [j for r in res.values() for j in r.jobs]
    assert {j.name for j in jobs} == (set(STAGE_PLAN) - {"swe_rl"}) | {"swe_rl_agentless", "swe_rl_agentic"}
    assert check_render(jobs, tree) == []


def _mutated(path: Path, tmp_path: Path, edit) -> Path:
    data = load_yaml(path)
    edit(data)
    out = tmp_path / path.name
    out.write_text(dump_yaml(data))
    return out


def test_if_rl_reward_shaping_leaves_dapo_knobs_out_and_nulls_are_refused(rendered, tree, tmp_path):
    _, res = rendered
    path = res["if_rl"].jobs[0].config_path
    shaping = load_yaml(path)["grpo"]["reward_shaping"]
    assert shaping == {"enabled": True, "stop_properly_penalty_coef": 0.0}
    # the old rendering (DAPO knobs as null) is what v0.7.0 rejected: the validator now says so
    bad = _mutated(path, tmp_path, lambda d: d["grpo"]["reward_shaping"].update(
        overlong_buffer_length=None, overlong_buffer_penalty=None, max_response_length=None))
    problems = check_file(bad, tree)
    for k in ("overlong_buffer_length", "overlong_buffer_penalty", "max_response_length"):
        assert any(f"grpo.reward_shaping.{k}: None" in p for p in problems), (k, problems)


def test_types_checked_beyond_names(tree):
    cfg = {"grpo": {"num_prompts_per_step": "128", "use_dynamic_sampling": 1},
           "policy": {"megatron_cfg": {"optimizer": {"lr": 3e-6}}}}
    problems = type_problems(cfg)
    assert any("grpo.num_prompts_per_step: '128'" in p for p in problems)
    assert any("grpo.use_dynamic_sampling: 1" in p for p in problems)
    assert not any("optimizer.lr" in p for p in problems)


def test_unresolved_mandatory_value_is_refused():
    assert any("???" in p for p in type_problems({"env": {"nemo_gym": {"x": {"dataset_path": "???"}}}}))


def test_nested_override_is_reported_and_sft_uses_a_top_level_one(rendered, tree, tmp_path):
    _, res = rendered
    path = res["sft"].jobs[0].config_path
    data = load_yaml(path)["data"]
    assert data["_override_"] is True and "_override_" not in data["train"]
    assert data["train"]["dataset_name"] == "openai_format" and "split" not in data["train"]
    # before: _override_ inside data.train, which v0.7.0 does not honour (SQuAD's 'split' stayed merged in)
    def old(d):
        d["data"].pop("_override_")
        d["data"]["train"]["_override_"] = True
        for k in ("max_input_seq_length", "shuffle", "num_workers", "add_bos", "add_eos", "add_generation_prompt",
                  "default"):
            d["data"].pop(k)
    problems = check_file(_mutated(path, tmp_path, old), tree)
    assert any("data.train._override_" in p and "top level" in p for p in problems)


def test_rlhf_uses_genrm_simple_agent_and_sets_genrm_model_name(rendered, paper):
    _, res = rendered
    for stage in ("rlhf", "rlhf_branch"):
        cfg = load_yaml(res[stage].jobs[0].config_path)
        ng = cfg["env"]["nemo_gym"]
        # §4.5's GenRM (Qwen3-235B-A22B-Thinking-2507 trained on HelpSteer3) as NVIDIA's stage3_rlhf.yaml serves it
        assert ng["genrm_model_name"] == paper.cluster.judges["genrm"].model == \
            "nvidia/Qwen3-Nemotron-235B-A22B-GenRM-2603"
        gs = ng["genrm_compare_resources_server"]["resources_servers"]["genrm_compare"]
        assert gs["num_rollouts_per_prompt"] == cfg["grpo"]["num_generations_per_prompt"] == 16
        # the profile's length normalisation reaches Gym (its default is 0.0)
        assert gs["group_answer_length_penalty_coeff"] == paper.stage(stage).judge.answer_length_penalty_coeff == 0.1
        genrm = ng["genrm_model"]["responses_api_models"]["genrm_model"]
        assert genrm["vllm_serve_kwargs"]["tensor_parallel_size"] == 8
        assert genrm["uses_reasoning_parser"] is True and genrm["vllm_serve_kwargs"]["reasoning_parser"] == "deepseek_r1"
        assert agent_for("rlhf") == "genrm_simple_agent"


def test_swe_agentic_sets_container_formatter_and_dataset_paths(rendered, paper, tmp_path):
    _, res = rendered
    ng = load_yaml(res["swe_rl"].jobs[1].config_path)["env"]["nemo_gym"]
    for inst, split in (("swe_agents_train", "train"), ("swe_agents_val", "validation")):
        a = ng[inst]["responses_api_agents"]["swe_agents"]
        assert a["container_formatter"] == "/shared/sif/sweb.eval.x86_64.{instance_id}.sif"
        assert a["dataset_path"].endswith(f"swe_rl/agentic/{split}.jsonl")
    cfg = load_config("paper", overrides=[o for o in OVERRIDES if "container_formatter" not in o])
    # the message names the key that works (cluster.swe_container_formatter), and the override that sets it
    with pytest.raises(ValueError, match=r"cluster\.swe_container_formatter is not set.*--set cluster\.swe_container_formatter="):
        render_stage(cfg, RunDir(tmp_path / "swe"), "swe_rl", allow_unpinned=True, allow_dirty=True)
    fixed = load_config("paper", overrides=[o for o in OVERRIDES if "container_formatter" not in o]
                        + ["cluster.swe_container_formatter=/shared/sif/{instance_id}.sif"])
    render_stage(fixed, RunDir(tmp_path / "swe2"), "swe_rl", allow_unpinned=True, allow_dirty=True)


def test_judges_are_configured_models_with_their_own_nodes(rendered, tmp_path):
    _, res = rendered
    lc = load_yaml(res["long_context_rl"].jobs[0].config_path)["env"]["nemo_gym"]
    assert lc["judge_model_name"] == "Qwen/Qwen3-235B-A22B-Instruct-2507"
    server = lc["equivalence_llm_judge"]["resources_servers"]["equivalence_llm_judge"]["judge_model_server"]
    assert server["name"] == "judge_model"   # Gym's config defaults to policy_model
    swe = load_yaml(res["swe_rl"].jobs[0].config_path)["env"]["nemo_gym"]
    # agentless SWE's swerl_llm_judge scores the <solution> letter and calls no model: no judge node
    assert "judge_model_name" not in swe and "judge_model" not in swe and "num_gpu_nodes" not in swe
    assert json.loads(res["swe_rl"].provenance_path.read_text())["jobs"]["swe_rl_agentless"]["judge_nodes"] == 0
    prov = json.loads(res["long_context_rl"].provenance_path.read_text())["jobs"]["long_context_rl"]
    assert prov["judge_nodes"] == 1 and prov["nodes"] == 33 and lc["num_gpu_nodes"] == 1
    assert "--nodes=33" in res["long_context_rl"].jobs[0].launch_path.read_text()
    assert load_yaml(res["code_rl"].jobs[0].config_path)["env"]["nemo_gym"].get("judge_model_name") is None
    for bad, msg in ((["cluster.judges.long_context_judge.model=null"], "long_context_judge.model is not set"),
                     (["cluster.judges.long_context_judge.model=/x/policy"], "is the policy model")):
        cfg = load_config("paper", overrides=OVERRIDES + bad)
        with pytest.raises(ValueError, match=msg):
            render_stage(cfg, RunDir(tmp_path / "j"), "long_context_rl", allow_unpinned=True, allow_dirty=True,
                         input_model="/x/policy")


def test_slurm_account_and_partition_are_required(tmp_path):
    cfg = load_config("paper", overrides=["cluster.account=acct"])
    with pytest.raises(ValueError, match="cluster.partition not set"):
        render_stage(cfg, RunDir(tmp_path / "s"), "sft", allow_unpinned=True, allow_dirty=True)
    assert not (tmp_path / "s").exists() or not list((tmp_path / "s").rglob("*.launch.sh"))


def test_launch_mounts_the_submit_directory(rendered):
    _, res = rendered
    text = res["sft"].jobs[0].launch_path.read_text()
    assert 'export MOUNTS="$PWD:$PWD",' in text
    assert "--account=acct" in text and "--partition=batch" in text and "ACCOUNT" not in text


def test_prefetch_config_sets_dummy_interpolation_values():
    from recipe.cluster.gym import prefetch_text

    ng = load_yaml(prefetch_text())["env"]["nemo_gym"]
    assert ng["genrm_model_name"] == "dummy-genrm"
    assert ng["swe_agents_train"]["responses_api_agents"]["swe_agents"]["container_formatter"] == "dummy"
    assert (Path(__file__).parents[1] / "containers/gym_envs.yaml").read_text() == prefetch_text()


def test_validator_catches_each_gym_wiring_mistake(rendered, tree, tmp_path):
    _, res = rendered
    cases = [
        ("rlhf", 0, lambda d: d["env"]["nemo_gym"].pop("genrm_model_name"), "genrm_model_name is not set"),
        ("swe_rl", 1, lambda d: d["env"]["nemo_gym"]["swe_agents_val"]["responses_api_agents"]["swe_agents"].update(
            container_formatter="???"), "swe_agents_val.responses_api_agents.swe_agents.container_formatter"),
        ("long_context_rl", 0, lambda d: d["env"]["nemo_gym"].pop("equivalence_llm_judge"), "policy_model"),
        ("mopd", 0, lambda d: d["env"]["nemo_gym"].update(rlhf_opd_simple_agent={"responses_api_agents": {
            "simple_agent": {"skip_verification": True}}}), "skip_verification"),
    ]
    for stage, job, edit, msg in cases:
        path = res[stage].jobs[job].config_path
        assert check_file(path, tree) == [], stage                      # the rendered file is clean ...
        bad = tmp_path / stage
        bad.mkdir()
        problems = check_file(_mutated(path, bad, edit), tree)          # ... the old mistake is caught
        assert any(msg in p for p in problems), (stage, problems)


def test_mopd_refuses_rows_for_the_old_pass_through_agent(paper, tmp_path):
    """RLHF rows prepared for rlhf_opd_simple_agent (a Gym-branch agent) cannot be routed at the pinned Gym."""
    from recipe.runs.teachers import record_selection

    run = RunDir(tmp_path / "m")
    for s in ("sft", "if_rl", "multi_domain_rl", "rlhf_branch"):
        run.write_manifest(s, {"status": "done"})
    group = ("instruction_following", "mcqa", "workplace_tools", "structured_output")
    record_selection(run, "multi_domain_rl", {"final": {"step": 1, "checkpoint": "/c", "scores": {
        d: {"score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 100} for d in group}}})
    cfg = load_config("paper", overrides=OVERRIDES + ["mopd.teacher_routing.instruction_following=select:multi_domain_rl",
                                                      "mopd.teacher_routing.mcqa=select:multi_domain_rl",
                                                      "mopd.teacher_routing.workplace_tools=select:multi_domain_rl",
                                                      "mopd.teacher_routing.structured_output=select:multi_domain_rl"])
    data = run.path / "nemo_rl_data" / "mopd"
    data.mkdir(parents=True)
    row = {"responses_create_params": {"input": [{"role": "user", "content": "hi"}]},
           "agent_ref": {"type": "responses_api_agents", "name": "rlhf_opd_simple_agent"}}
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="rlhf_opd_simple_agent"):
        render_stage(cfg, run, "mopd", allow_unpinned=True, allow_dirty=True)
