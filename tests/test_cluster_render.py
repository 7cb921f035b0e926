"""Rendering every paper stage for NeMo-RL v0.7.0 and validating it against the release's genuine configs.

Checks: keys exist in the release, the file loads with the release's ``defaults:`` rules and every
value we set survives the merge, the paper's values land in the right keys, the scripts pass shellcheck, and the
whole cascade chains stage N+1 onto stage N's converted checkpoint. The two overrides below fill what the paper
profile leaves open (agentic SWE step budget; MOPD's logprob-error threshold that NeMo-RL's opd estimator needs).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipe.cluster import keymap
from recipe.cluster.lock import UnpinnedError
from recipe.cluster.nrl_yaml import flatten_keys, get_path, load_yaml
from recipe.cluster.provenance import DirtyTreeError
from recipe.cluster.release import ReleaseTree
from recipe.cluster.render import render_cascade, render_stage
from recipe.cluster.config_checks import config_diff_text, load_rendered, release_keys, unknown_keys, value_mismatches
from recipe.config import STAGE_PLAN, load_config
from recipe.config.stages import MOPDConfig, RLStageConfig, SFTConfig
from recipe.runs.layout import RunDir

HUB_DL = "hub.download_dir=" + str(__import__("pathlib").Path(__file__).parent / "fixtures/cluster/hub_downloads")  # stand-in released tokenizer download
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "mopd.is_seq_mask_threshold=2.0",
             "cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch", "cluster.account=acct", "cluster.partition=batch", "cluster.hf_home=/shared/hf",
             "cluster.swe_container_formatter=/shared/sif/sweb.eval.x86_64.{instance_id}.sif"]
SHELLCHECK = Path(sys.executable).parent / "shellcheck"
MOPD_DOMAINS = ["math", "instruction_following", "mcqa", "workplace_tools", "structured_output", "rlhf"]


@pytest.fixture(scope="module")
def paper():
    return load_config("paper", overrides=OVERRIDES)


@pytest.fixture(scope="module")
def tree(shared_dir):
    return ReleaseTree.find(shared_dir / "fixtures/nemo_rl_configs/v0.7.0")


from recipe.runs.teachers import record_selection  # noqa: E402


def _finish(run: RunDir, stage: str, scores: dict[str, float]) -> None:
    """What `recipe cluster status` records once a stage's HF checkpoint exists (manifest done, scores)."""
    from recipe.runs.teachers import record_scores

    m = run.read_manifest(stage) or {}
    run.write_manifest(stage, {**m, "status": "done"})
    record_scores(run, stage, scores)


@pytest.fixture(scope="module")
def cascade(paper, tmp_path_factory):
    run = RunDir(tmp_path_factory.mktemp("runs") / "paper-run")
    first = render_cascade(paper, run, stages=["sft", "if_rl", "multi_domain_rl"], allow_unpinned=True, allow_dirty=True)
    _finish(run, "sft", {"math": 0.9, "instruction_following": 0.5, "mcqa": 0.6})
    _finish(run, "if_rl", {"math": 0.85, "instruction_following": 0.8, "mcqa": 0.6})
    _finish(run, "multi_domain_rl", {"math": 0.8, "instruction_following": 0.75, "mcqa": 0.7,
                                     "workplace_tools": 0.6, "structured_output": 0.9})
    # teacher candidates scored on the selection split on all four multi-domain teacher domains (paper scale);
    # averages: if_rl@step_10 0.55, if_rl@final 0.6, md@step_10 0.7, md@final 0.65 -> md@step_10 is the teacher
    group = ("instruction_following", "mcqa", "workplace_tools", "structured_output")
    for stage, cands in {"if_rl": {"step_000010": (10, 0.55), "final": (180, 0.6)},
                         "multi_domain_rl": {"step_000010": (10, 0.7), "final": (70, 0.65)}}.items():
        record_selection(run, stage, {n: {"step": st, "checkpoint": f"/ckpt/{stage}/{n}", "scores": {
            d: {"score": x, "ci_low": x - 0.05, "ci_high": x + 0.05, "n": 500} for d in group}}
            for n, (st, x) in cands.items()})
    rest = render_cascade(paper, run, stages=list(STAGE_PLAN[3:]), allow_unpinned=True, allow_dirty=True)
    return run, {r.stage: r for r in first + rest}


def test_every_stage_field_is_mapped_or_explained():
    fields = set(SFTConfig.model_fields) | set(RLStageConfig.model_fields) | set(MOPDConfig.model_fields)
    mapped = keymap.mapped_fields() | set(keymap.NOT_NEMO_RL_KEYS)
    assert fields - mapped == set(), "stage fields without a NeMo-RL mapping or a stated reason"
    assert set(keymap.NOT_NEMO_RL_KEYS) - fields == set()


def test_rendered_keys_exist_in_release(cascade, tree):
    _, results = cascade
    known = release_keys(tree)
    bad = []
    for res in results.values():
        for job in res.jobs:
            flat = flatten_keys({k: v for k, v in load_yaml(job.config_path).items() if k != "defaults"})
            # free-form maps (teacher_model_by_agent_name values, config_paths list) are leaves already
            bad += [(job.name, k) for k in unknown_keys(flat, known)]
    assert bad == []


def test_unknown_key_is_reported(tree):
    assert unknown_keys({"grpo.num_prompts_per_stepz": 1}, release_keys(tree)) == ["grpo.num_prompts_per_stepz"]


def test_rendered_configs_load_with_release_inheritance(cascade, tree):
    _, results = cascade
    for res in results.values():
        for job in res.jobs:
            assert load_yaml(job.config_path)["defaults"] == f"/opt/nemo-rl/{job.base_config}"
            cfg = load_rendered(job.config_path, tree)
            expected = {k: v for k, v in job.overrides.items()}
            assert value_mismatches(cfg, expected) == [], job.name
            assert get_path(cfg, "policy.tokenizer.name") == job.input_model  # ${policy.model_name} resolved


def _cfg(results, stage, tree, job=0):
    return load_rendered(results[stage].jobs[job].config_path, tree)


def test_paper_values_land_in_the_right_keys(cascade, tree):
    _, r = cascade
    ifrl = _cfg(r, "if_rl", tree)
    assert get_path(ifrl, "grpo.num_prompts_per_step") == 128
    assert get_path(ifrl, "grpo.num_generations_per_prompt") == 16
    assert get_path(ifrl, "policy.train_global_batch_size") == 2048   # one optimizer step per rollout batch
    assert get_path(ifrl, "policy.max_total_sequence_length") == 49152
    assert get_path(ifrl, "policy.megatron_cfg.optimizer.lr") == 3e-6
    assert get_path(ifrl, "policy.megatron_cfg.optimizer.adam_beta2") == 0.95
    assert get_path(ifrl, "grpo.max_num_steps") == 180
    assert get_path(ifrl, "grpo.use_dynamic_sampling") is True
    assert get_path(ifrl, "grpo.dynamic_sampling_max_gen_batches") == 10   # read by NeMo-RL when sampling is on
    assert get_path(ifrl, "grpo.overlong_filtering") is False
    assert get_path(ifrl, "grpo.reward_shaping.stop_properly_penalty_coef") == 0.0   # unfinished -> reward 0
    assert get_path(ifrl, "grpo.use_leave_one_out_baseline") is False
    assert get_path(ifrl, "loss_fn.token_level_loss") is True
    assert get_path(ifrl, "policy.tokenizer.chat_template_kwargs.enable_thinking") is True
    assert get_path(ifrl, "env.nemo_gym.config_paths")[0].endswith("vllm_model_for_training.yaml")
    assert any("instruction_following" in p for p in get_path(ifrl, "env.nemo_gym.config_paths"))
    assert get_path(ifrl, "checkpointing.checkpoint_must_save_by") == "00:03:40:00"
    assert get_path(ifrl, "cluster.num_nodes") == 32

    m = _cfg(r, "mopd", tree)
    assert get_path(m, "grpo.num_prompts_per_step") == 128 and get_path(m, "grpo.num_generations_per_prompt") == 4
    assert get_path(m, "policy.train_global_batch_size") == 512
    assert get_path(m, "policy.max_total_sequence_length") == 98304
    assert get_path(m, "policy.megatron_cfg.optimizer.lr") == 2e-6
    assert get_path(m, "policy.megatron_cfg.scheduler.lr_warmup_iters") == 30
    assert get_path(m, "policy.megatron_cfg.scheduler.lr_warmup_init") == 2e-7
    assert get_path(m, "loss_fn.truncated_importance_sampling_ratio_min") == 0.5
    assert get_path(m, "loss_fn.truncated_importance_sampling_ratio") == 2.0
    assert get_path(m, "loss_fn.truncated_importance_sampling_type") == "icepop"
    assert get_path(m, "loss_fn.token_level_loss") is False      # Eq. 4 per-sequence mean
    assert get_path(m, "grpo.adv_estimator.name") == "opd"
    assert get_path(m, "grpo.async_grpo.enabled") is True
    assert get_path(m, "grpo.max_num_steps") == 52
    assert get_path(m, "on_policy_distillation.enabled") is True
    assert get_path(m, "cluster.num_nodes") == 13 + 3   # + one node per distinct teacher checkpoint

    rlhf = _cfg(r, "rlhf", tree)
    assert get_path(rlhf, "loss_fn.reference_policy_kl_penalty") == 0.03
    assert get_path(rlhf, "policy.generation.max_new_tokens") == 16384
    code = _cfg(r, "code_rl", tree)
    assert get_path(code, "policy.generation.top_p") == 0.95
    assert get_path(code, "policy.generation.max_new_tokens") == 118784
    lc = _cfg(r, "long_context_rl", tree)
    assert get_path(lc, "data.max_input_seq_length") == 32768
    assert get_path(lc, "policy.max_total_sequence_length") == 49152   # Table 9: 49K total, input <= 32K
    assert get_path(lc, "policy.generation.max_new_tokens") == 49152   # capped by the total, as grpo_nanov3.yaml
    for job in (rlhf, code, agentic := _cfg(r, "swe_rl", tree, job=1), _cfg(r, "swe_rl", tree, job=0)):
        # [default] for every GRPO stage (RECIPE.md §5, §10): IS correction + sequence mask, 10 warm-up steps
        assert get_path(job, "loss_fn.use_importance_sampling_correction") is True
        assert get_path(job, "grpo.seq_logprob_error_threshold") == 2.0
        assert get_path(job, "policy.megatron_cfg.scheduler.lr_warmup_iters") == 10
    agentic = _cfg(r, "swe_rl", tree, job=1)
    assert get_path(agentic, "grpo.num_prompts_per_step") == 16 and get_path(agentic, "grpo.num_generations_per_prompt") == 64
    assert get_path(agentic, "policy.train_global_batch_size") == 1024
    assert get_path(agentic, "policy.generation.temperature") == 0.8
    assert get_path(agentic, "policy.megatron_cfg.optimizer.min_lr") == 0.0
    assert get_path(agentic, "policy.megatron_cfg.scheduler.lr_decay_style") == "linear"
    assert get_path(agentic, "grpo.max_rollout_turns") == 200
    assert get_path(agentic, "policy.tokenizer.chat_template_kwargs.enable_thinking") is False

    sft = _cfg(r, "sft", tree)
    assert get_path(sft, "policy.train_global_batch_size") == 64
    assert get_path(sft, "policy.max_total_sequence_length") == 262144
    assert get_path(sft, "policy.megatron_cfg.optimizer.lr") == 5e-5
    assert get_path(sft, "policy.megatron_cfg.optimizer.min_lr") == 5e-6
    assert get_path(sft, "policy.megatron_cfg.scheduler.lr_decay_style") == "cosine"
    assert get_path(sft, "policy.megatron_cfg.scheduler.lr_decay_iters") == 40000
    assert get_path(sft, "policy.megatron_cfg.optimizer.adam_beta2") == 0.98
    assert get_path(sft, "sft.max_num_steps") == 33000
    assert get_path(sft, "policy.megatron_cfg.enabled") is True and get_path(sft, "policy.dtensor_cfg.enabled") is False
    assert get_path(sft, "data.train.dataset_name") == "openai_format"
    assert "split" not in get_path(sft, "data.train")   # _override_ dropped the squad defaults
    tmpl = Path(get_path(sft, "policy.tokenizer.chat_template"))
    assert tmpl.suffix == ".jinja" and "<think>" in tmpl.read_text()   # not sft.yaml's SQuAD template


def test_mopd_teacher_map_from_teachers_json(cascade, tree):
    run, r = cascade
    m = _cfg(r, "mopd", tree)
    tmap = get_path(m, "on_policy_distillation.teacher_model_by_agent_name")
    assert tmap["math_with_judge_simple_agent"] == str(run.checkpoint_dir("sft"))   # stage:sft slot
    # select: one multi-domain teacher (best selection-split average over the group), intermediate steps included
    for agent in ("instruction_following", "mcqa", "workplace_assistant", "structured_outputs"):
        assert tmap[f"{agent}_simple_agent"] == "/ckpt/multi_domain_rl/step_000010"
    # RLHF rows go through the pinned Gym's own genrm_simple_agent (no skip_verification pass-through agent)
    assert tmap["genrm_simple_agent"] == "/ckpt/rlhf_branch"
    assert set(tmap) == {"math_with_judge_simple_agent", "instruction_following_simple_agent", "mcqa_simple_agent",
                         "workplace_assistant_simple_agent", "structured_outputs_simple_agent", "genrm_simple_agent"}
    assert get_path(m, "on_policy_distillation.strict_agent_name_match") is True
    gym_block = get_path(m, "env.nemo_gym")
    assert "rlhf_opd_simple_agent" not in gym_block and "skip_verification" not in json.dumps(gym_block)
    assert "resources_servers/genrm_compare/configs/genrm_compare.yaml" in gym_block["config_paths"]
    assert gym_block["genrm_model_name"] == "nvidia/Qwen3-Nemotron-235B-A22B-GenRM-2603"
    assert gym_block["policy_model_reasoning_off"]["_copy"] == "policy_model"   # genrm_compare.yaml's second agent


def test_mopd_refuses_without_teacher(paper, tmp_path):
    run = RunDir(tmp_path / "no-teachers")
    run.path.mkdir()
    with pytest.raises(ValueError, match="no teacher for domain 'math'.*not done"):
        render_stage(paper, run, "mopd", allow_unpinned=True, allow_dirty=True)


def test_cascade_chains_converted_checkpoints(cascade):
    run, r = cascade
    assert list(r) == list(STAGE_PLAN)
    assert r["sft"].jobs[0].input_model == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-Base-BF16"
    paper = load_config("paper", overrides=OVERRIDES)
    for nxt in STAGE_PLAN[1:]:
        prev = paper.input_stage(nxt)   # init_from: rlhf_branch <- sft, mopd <- multi_domain_rl, else the stage before
        out = r[prev].jobs[-1].hf_out
        assert out == run.checkpoint_dir(prev)
        assert r[nxt].jobs[0].input_model == str(out)
        assert f"OUT={out}" in r[prev].jobs[-1].convert_path.read_text()
    assert r["rlhf_branch"].jobs[0].input_model == str(run.checkpoint_dir("sft"))
    assert r["mopd"].jobs[0].input_model == str(run.checkpoint_dir("multi_domain_rl"))
    swe = r["swe_rl"].jobs
    assert swe[1].input_model == str(swe[0].hf_out) == str(run.stage_dir("swe_rl") / "agentless_checkpoint")


def test_scripts_pass_shellcheck(cascade):
    _, r = cascade
    scripts = [str(p) for res in r.values() for j in res.jobs for p in (j.launch_path, j.convert_path)]
    proc = subprocess.run([str(SHELLCHECK), "--severity=style", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_launch_script_contents(cascade):
    run, r = cascade
    text = r["if_rl"].jobs[0].launch_path.read_text()
    assert 'dep="singleton' in text and "--nodes=32" in text and "--time=04:00:00" in text
    assert "WARNING: UNPINNED CONTAINER" in text.splitlines()[1]          # top of the script
    assert "fingerprint_check.py" in text and "--allow-unpinned" in text
    assert "examples/nemo_gym/run_grpo_nemo_gym.py" in text
    assert "examples/run_sft.py" in r["sft"].jobs[0].launch_path.read_text()
    snap = Path(json.loads(r["if_rl"].provenance_path.read_text())["code_snapshot"])
    assert (snap / "recipe/cluster/fingerprint_check.py").is_file()
    assert (snap / "containers/nemo-rl.lock.json").is_file()


def test_provenance_recorded(cascade):
    run, r = cascade
    prov = json.loads(r["mopd"].provenance_path.read_text())
    assert prov["allow_unpinned"] is True and prov["image_digest"] is None and prov["allow_dirty"] is True
    assert len(prov["resolved_config_sha256"]) == 64 and prov["git_commit"]
    assert prov["jobs"]["mopd"]["data"]["train"]["path"].endswith("mopd/train.jsonl")
    rj = run.read_run_json()
    assert set(rj["cluster"]) == set(STAGE_PLAN)
    assert rj["cluster"]["if_rl"]["image_digest"] is None
    man = run.read_manifest("rlhf")
    assert man["status"] == "pending" and man["backend"] == "cluster"


def test_unpinned_and_dirty_are_refused_pinned_renders_by_digest(paper, tmp_path):
    root = tmp_path / "project"          # not a git checkout: counts as dirty
    (root / "containers").mkdir(parents=True)
    lock = json.loads((Path(__file__).resolve().parents[1] / "containers/nemo-rl.lock.json").read_text())
    lock["digest"] = None
    (root / "containers/nemo-rl.lock.json").write_text(json.dumps(lock))
    run = RunDir(tmp_path / "strict")
    with pytest.raises(UnpinnedError, match="recipe cluster lock"):
        render_stage(paper, run, "if_rl", allow_dirty=True, project_root=root)
    digest = "sha256:" + "cd" * 32
    lock["digest"] = digest
    (root / "containers/nemo-rl.lock.json").write_text(json.dumps(lock))
    with pytest.raises(DirtyTreeError, match="--allow-dirty"):
        render_stage(paper, run, "if_rl", project_root=root)
    res = render_stage(paper, run, "if_rl", allow_dirty=True, project_root=root)
    text = res.jobs[0].launch_path.read_text()
    assert f"export CONTAINER='nvcr.io#nvidia/nemo-rl@{digest}'" in text
    assert "UNPINNED" not in text and "--allow-unpinned" not in text
    prov = json.loads(res.provenance_path.read_text())
    assert prov["image_digest"] == digest and prov["allow_unpinned"] is False and prov["git_commit"] is None
    assert run.read_run_json()["container_digest"] == digest


def test_steps_null_is_refused(tmp_path):
    cfg = load_config("paper", overrides=["mopd.is_seq_mask_threshold=2.0", "cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"])
    with pytest.raises(ValueError, match="swe_rl.agentic.steps"):
        render_stage(cfg, RunDir(tmp_path / "r"), "swe_rl", allow_unpinned=True, allow_dirty=True)


def test_release_default_for_dynamic_sampling_is_the_release_value(tree):
    base = tree.load("examples/configs/grpo_math_1B.yaml")
    assert base["grpo"]["dynamic_sampling_max_gen_batches"] == keymap.RELEASE_DYNAMIC_SAMPLING_MAX_GEN_BATCHES
    assert "dynamic_sampling_max_gen_batches" not in tree.load("examples/nemo_gym/grpo_nanov3.yaml")["grpo"]


def test_config_diff_against_release(cascade, tree):
    _, r = cascade
    j = r["mopd"].jobs[0]
    text = config_diff_text(j.config_path, j.base_config, j.overrides, tree)
    assert "grpo.num_generations_per_prompt: 16 -> 4" in text
    assert "policy.megatron_cfg.optimizer.lr: 3e-06 -> 2e-06" in text
    assert "policy.max_total_sequence_length: 49152 -> 98304" in text


def test_gym_rows_are_checked_for_routable_agents(paper, tmp_path):
    run = RunDir(tmp_path / "rows")
    data = run.path / "nemo_rl_data" / "if_rl"
    data.mkdir(parents=True)
    row = {"responses_create_params": {"input": [{"role": "user", "content": "Write 3 words."}]},
           "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 3}]}
    (data / "validation.jsonl").write_text(json.dumps(row) + "\n")   # no agent_ref: NeMo-RL cannot route it
    (data / "train.jsonl").write_text(json.dumps({**row, "agent_ref": {"name": "instruction_following_simple_agent"}}) + "\n")
    with pytest.raises(ValueError, match="no agent_ref.name"):
        render_stage(paper, run, "if_rl", allow_unpinned=True, allow_dirty=True)
    (data / "validation.jsonl").write_text(json.dumps({**row, "agent_ref": {"name": "mcqa_simple_agent"}}) + "\n")
    with pytest.raises(ValueError, match=r"agents \['mcqa_simple_agent'\] are not served"):
        render_stage(paper, run, "if_rl", allow_unpinned=True, allow_dirty=True)
    (data / "validation.jsonl").write_text((data / "train.jsonl").read_text() * 2)
    res = render_stage(paper, run, "if_rl", allow_unpinned=True, allow_dirty=True)
    d = json.loads(res.provenance_path.read_text())["jobs"]["if_rl"]["data"]
    assert d["agents"] == {"train": {"instruction_following_simple_agent": 1},
                           "validation": {"instruction_following_simple_agent": 2}}
    assert len(d["train"]["sha256"]) == 64


def test_input_model_override_for_side_branch(paper, tmp_path):
    run = RunDir(tmp_path / "branch")
    res = render_stage(paper, run, "rlhf", allow_unpinned=True, allow_dirty=True, input_model="/runs/main/01_sft/checkpoint")
    assert load_yaml(res.jobs[0].config_path)["policy"]["model_name"] == "/runs/main/01_sft/checkpoint"
    assert json.loads(res.provenance_path.read_text())["jobs"]["rlhf"]["input_model"] == "/runs/main/01_sft/checkpoint"


def test_inferred_environments_only_warn_about_agent_names(paper, tmp_path):
    run = RunDir(tmp_path / "rows-lc")
    data = run.path / "nemo_rl_data" / "long_context_rl"
    data.mkdir(parents=True)
    row = {"responses_create_params": {"input": [{"role": "user", "content": "hi"}]},
           "agent_ref": {"type": "responses_api_agents", "name": "lc_judge_simple_agent"}}
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    res = render_stage(paper, run, "long_context_rl", allow_unpinned=True, allow_dirty=True)
    header = res.jobs[0].config_path.read_text().split("defaults:")[0]
    assert "DEVIATION" in header and "lc_judge_simple_agent" in header


def test_rlhf_rows_must_use_the_pinned_gym_agent(paper, tmp_path):
    """genrm_compare.yaml (pinned Gym) defines genrm_simple_agent: rows naming the non-existent
    genrm_compare_agent are refused; genrm_simple_agent rows pass."""
    run = RunDir(tmp_path / "rows-rlhf")
    data = run.path / "nemo_rl_data" / "rlhf"
    data.mkdir(parents=True)
    row = {"responses_create_params": {"input": [{"role": "user", "content": "hi"}]},
           "agent_ref": {"type": "responses_api_agents", "name": "genrm_compare_agent"}}
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="genrm_compare_agent"):
        render_stage(paper, run, "rlhf", allow_unpinned=True, allow_dirty=True)
    row["agent_ref"]["name"] = "genrm_simple_agent"
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    res = render_stage(paper, run, "rlhf", allow_unpinned=True, allow_dirty=True)
    assert json.loads(res.provenance_path.read_text())["jobs"]["rlhf"]["data"]["agents"]["train"] == {
        "genrm_simple_agent": 1}


@pytest.mark.parametrize("override,message", [
    ("cluster.stages.if_rl.nodes=3", "not divisible by TP2·PP2·CP4"),
    ("cluster.stages.if_rl.nodes=6", "train_global_batch_size 2048 is not divisible by data-parallel size 3"),
    ("if_rl.max_response_tokens=49150", "49150 is not divisible by 16"),
])
def test_bad_layouts_are_refused(tmp_path, override, message):
    cfg = load_config("paper", overrides=[override, "cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"])
    with pytest.raises(ValueError, match=message):
        render_stage(cfg, RunDir(tmp_path / "bad"), "if_rl", allow_unpinned=True, allow_dirty=True)


def test_mopd_nodes_add_one_per_distinct_teacher(cascade):
    run, r = cascade
    job = r["mopd"].jobs[0]
    n_teachers = len(set(load_yaml(job.config_path)["on_policy_distillation"]["teacher_model_by_agent_name"].values()))
    assert n_teachers == 3          # SFT (math), ONE multi-domain teacher (IF, mcqa, tools, JSON), RLHF branch
    assert job.overrides["cluster.num_nodes"] == 13 + 3
    # + the GenRM's own nodes (RLHF rows are scored by genrm_simple_agent): served by Gym, not NeMo-RL's cluster
    assert "--nodes=18" in job.launch_path.read_text()
    prov = json.loads(r["mopd"].provenance_path.read_text())["jobs"]["mopd"]
    assert prov["nodes"] == 18 and prov["teacher_nodes"] == 3 and prov["judge_nodes"] == 2


def test_bad_mopd_layout_refused(tmp_path):
    cfg = load_config("paper", overrides=OVERRIDES + ["cluster.stages.mopd.nodes=6"])   # 6 - 5 generation = 1 node
    run = RunDir(tmp_path / "m")
    for s in ("sft", "if_rl", "multi_domain_rl", "rlhf_branch"):
        run.write_manifest(s, {"status": "done"})
    from recipe.runs.teachers import record_scores
    record_scores(run, "if_rl", {d: 0.5 for d in ("instruction_following", "mcqa", "workplace_tools", "structured_output")})
    for s in ("if_rl", "multi_domain_rl"):
        record_selection(run, s, {"final": {"step": 1, "checkpoint": str(run.checkpoint_dir(s)), "scores": {
            d: {"score": 50.0, "ci_low": 45.0, "ci_high": 55.0, "n": 100}
            for d in ("instruction_following", "mcqa", "workplace_tools", "structured_output")}}})
    with pytest.raises(ValueError, match="8 policy GPUs are not divisible by TP2·PP2·CP4"):
        render_stage(cfg, run, "mopd", allow_unpinned=True, allow_dirty=True)


# Keys that define the MOPD algorithm and its schedule (RECIPE.md §6, NEMO_RL.md §5).
MOPD_KEYS = [
    "grpo.num_prompts_per_step", "grpo.num_generations_per_prompt", "grpo.async_grpo.enabled",
    "grpo.async_grpo.max_trajectory_age_steps", "grpo.adv_estimator.name", "grpo.seq_logprob_error_threshold",
    "grpo.normalize_rewards", "grpo.use_leave_one_out_baseline", "grpo.overlong_filtering", "grpo.use_dynamic_sampling",
    "loss_fn.disable_ppo_ratio", "loss_fn.use_importance_sampling_correction", "loss_fn.truncated_importance_sampling_type",
    "loss_fn.truncated_importance_sampling_ratio", "loss_fn.truncated_importance_sampling_ratio_min",
    "loss_fn.reference_policy_kl_penalty", "loss_fn.token_level_loss",
    "policy.train_global_batch_size", "policy.max_total_sequence_length", "policy.generation.max_new_tokens",
    "policy.generation.temperature", "policy.generation.top_p", "policy.max_grad_norm",
    "policy.megatron_cfg.optimizer.lr", "policy.megatron_cfg.optimizer.min_lr",
    "policy.megatron_cfg.optimizer.weight_decay", "policy.megatron_cfg.optimizer.adam_beta1",
    "policy.megatron_cfg.optimizer.adam_beta2", "policy.megatron_cfg.scheduler.lr_decay_style",
    "policy.megatron_cfg.scheduler.lr_warmup_iters", "policy.megatron_cfg.scheduler.lr_warmup_init",
    "policy.megatron_cfg.tensor_model_parallel_size", "policy.megatron_cfg.pipeline_model_parallel_size",
    "policy.megatron_cfg.context_parallel_size", "policy.megatron_cfg.expert_model_parallel_size",
    "policy.generation.vllm_cfg.tensor_parallel_size", "policy.generation.colocated.enabled",
    "policy.generation.colocated.resources.num_nodes", "on_policy_distillation.enabled",
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.tensor_model_parallel_size",
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.context_parallel_size",
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.expert_model_parallel_size",
    "on_policy_distillation.strict_agent_name_match",
]


def test_mopd_matches_nvidia_replication_except_documented_deviations(cascade, tree, shared_dir):
    """Our paper-profile MOPD vs NVIDIA's Cascade MOPD replication (yifu/mopd_cascade): the only differences are the
    ones RECIPE.md §6/§10 and NEMO_RL.md §5 document."""
    from recipe.cluster.nrl_yaml import load_with_defaults, resolve

    _, r = cascade
    ours = _cfg(r, "mopd", tree)
    rep = resolve(load_with_defaults(
        shared_dir / "fixtures/nemo_rl_configs/yifu__mopd_cascade/examples__nemo_gym__mopd_cascade_replicate_16n8g_98k.yaml"))
    diff = {k: (get_path(rep, k), get_path(ours, k)) for k in MOPD_KEYS if get_path(rep, k) != get_path(ours, k)}
    assert diff == {
        "grpo.overlong_filtering": (True, False),          # paper Table 8: off; replication on (RECIPE.md §10)
        "loss_fn.token_level_loss": (True, False),         # Eq. 4 per-sequence mean; replication batch-global
        "on_policy_distillation.strict_agent_name_match": (False, True),   # NEMO_RL.md §5 [recommendation]
        "policy.megatron_cfg.optimizer.adam_beta2": (0.999, 0.95),   # paper App. B Table 8: betas (0.9, 0.95)
    }


GRPO_KEYS = [
    "grpo.num_prompts_per_step", "grpo.num_generations_per_prompt", "grpo.normalize_rewards",
    "grpo.use_leave_one_out_baseline", "grpo.use_dynamic_sampling", "grpo.overlong_filtering",
    "grpo.seq_logprob_error_threshold", "grpo.async_grpo.enabled", "loss_fn.use_importance_sampling_correction",
    "loss_fn.token_level_loss", "loss_fn.reference_policy_kl_penalty", "policy.train_global_batch_size",
    "policy.max_total_sequence_length", "policy.generation.max_new_tokens", "policy.generation.temperature",
    "policy.generation.top_p", "policy.max_grad_norm", "policy.megatron_cfg.optimizer.lr",
    "policy.megatron_cfg.optimizer.min_lr", "policy.megatron_cfg.optimizer.weight_decay",
    "policy.megatron_cfg.optimizer.adam_beta1", "policy.megatron_cfg.optimizer.adam_beta2",
    "policy.megatron_cfg.scheduler.lr_decay_style", "policy.megatron_cfg.scheduler.lr_warmup_iters",
    "policy.megatron_cfg.scheduler.lr_warmup_init", "policy.megatron_cfg.tensor_model_parallel_size",
    "policy.megatron_cfg.pipeline_model_parallel_size", "policy.megatron_cfg.context_parallel_size",
    "policy.megatron_cfg.expert_model_parallel_size", "policy.megatron_cfg.freeze_moe_router",
    "policy.megatron_cfg.moe_router_load_balancing_type", "policy.generation.vllm_cfg.tensor_parallel_size",
    "policy.generation.vllm_kwargs.compilation_config.backend", "cluster.num_nodes", "cluster.gpus_per_node",
    "checkpointing.checkpoint_must_save_by",
]


def test_if_rl_matches_nano3_grpo_except_paper_settings(cascade, tree):
    """IF-RL vs NVIDIA's official Nano-3 Gym GRPO config: only the differences NEMO_RL.md §3.1 lists."""
    _, r = cascade
    ours = _cfg(r, "if_rl", tree)
    from recipe.cluster.nrl_yaml import resolve

    nano = resolve(tree.load("examples/nemo_gym/grpo_nanov3.yaml"))
    diff = {k: (get_path(nano, k), get_path(ours, k)) for k in GRPO_KEYS if get_path(nano, k) != get_path(ours, k)}
    assert diff == {
        "grpo.use_leave_one_out_baseline": (True, False),   # plain group mean (RECIPE.md §5)
        "grpo.use_dynamic_sampling": (False, True),         # dynamic filtering (§4.2)
        "grpo.overlong_filtering": (True, False),           # IF-RL: off, unfinished -> reward 0 instead
        "policy.megatron_cfg.optimizer.adam_beta2": (0.999, 0.95),   # App. B: betas (0.9, 0.95)
    }
