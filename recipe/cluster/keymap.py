"""The one table that maps our stage fields to NeMo-RL v0.7.0 keys ("no value typed twice").

Every hyperparameter written into a rendered NeMo-RL YAML comes from a stage section of the loaded profile
(``sft``, ``if_rl``, …, ``swe_rl.agentless``/``agentic``) through ``FIELD_MAP`` below; cluster-only facts
(parallelism, nodes) come from ``cluster.stages`` through ``resource_overrides``. The only literal values in this
module are *rules of the algorithm* (RECIPE.md §5: plain group-mean baseline, token-level loss, one update per
rollout batch; §6 / NEMO_RL.md §5: MOPD as ``opd`` estimator with ICE-POP masking and async GRPO), each cited
where it is written, and Nano-3 numerics settings NEMO_RL.md §8 requires.

Fields with no NeMo-RL key are listed in ``NOT_NEMO_RL_KEYS`` with the reason (e.g. ``domains`` select Gym
environments in ``recipe.cluster.gym``); fields NeMo-RL v0.7.0 cannot express are refused or reported as
deviations (``entropy_coef``, ``mopd.kl_discount`` and ``mopd.forward_kl_coef`` must be 0;
``prompt_mask_max_reward`` needs a Gym-side mask). A test checks that every field of the stage schemas appears in
exactly one of these places, so a new field cannot be forgotten.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from recipe.config.cluster_section import StageResources

Transform = Callable[[Any, Any], Any]  # (value, stage_cfg) -> NeMo-RL value

OPT = "policy.megatron_cfg.optimizer"
SCHED = "policy.megatron_cfg.scheduler"


@dataclass(frozen=True)
class Rule:
    field: str
    keys: tuple[str, ...]
    transform: Transform | None = None
    kinds: tuple[str, ...] = ("sft", "grpo", "mopd")
    note: str = ""

    def values(self, stage_cfg: Any) -> dict[str, Any]:
        raw = getattr(stage_cfg, self.field)
        if self.transform is None:
            return {k: raw for k in self.keys}
        out = self.transform(raw, stage_cfg)
        return out if isinstance(out, dict) else {k: out for k in self.keys}


def _warmup_init(v, s):
    # RECIPE.md §4.2 [default]: warm-up from LR/10 when the profile leaves warmup_start_lr unset.
    return v if v is not None else s.lr / 10


def _min_lr(v, s):
    # A constant schedule has no decay target: Megatron wants min_lr == lr (grpo_nanov3.yaml does so).
    return s.lr if s.lr_schedule == "constant" else v


def _decay_iters(_, s):
    if s.lr_schedule == "constant":
        return None
    return getattr(s, "planned_steps", None) or s.steps


def _thinking(v, _):
    # Nemotron chat template switch (RECIPE.md §2); as_prompted leaves the row's own setting.
    if v == "as_prompted":
        return {}
    return {"thinking": True, "instruct": False}[v]


def _s_total(_, s):
    if s.max_total_sequence_length is not None:
        return s.max_total_sequence_length
    return s.max_response_tokens + (s.max_input_tokens or 0)


def _reward_shaping(v, s):
    # NeMo-RL ProRLv2 "stop properly" shaping: coefficient 0 gives truncated (no-EOS) responses reward 0
    # (IF-RL: "unfinished -> reward 0", RECIPE.md §4.1); it takes precedence over DAPO buffer shaping in
    # nemo_rl/algorithms/reward_functions.py. The DAPO knobs (overlong_buffer_length/_penalty, max_response_length)
    # are NotRequired numbers in v0.7.0's RewardShapingConfig: they are left out, never written as null (the base,
    # grpo_nanov3.yaml, has none of them).
    if not v:
        return {"grpo.reward_shaping.enabled": False}
    return {"grpo.reward_shaping.enabled": True,
            "grpo.reward_shaping.stop_properly_penalty_coef": 0.0}


def _require_steps(v):
    if v is None:
        raise ValueError("steps is null (the paper does not report it; RECIPE.md §10: run to a validation plateau). "
                         "NeMo-RL needs a step budget: pass an override such as --set swe_rl.agentic.steps=100")
    return v


# NeMo-RL reads grpo.dynamic_sampling_max_gen_batches whenever dynamic sampling is on; grpo_nanov3.yaml lacks the
# key, so the release's own default (examples/configs/grpo_math_1B.yaml, v0.7.0: 10 refill batches) is written.
RELEASE_DYNAMIC_SAMPLING_MAX_GEN_BATCHES = 10


def _dynamic(v, max_rounds=RELEASE_DYNAMIC_SAMPLING_MAX_GEN_BATCHES, multiplier=1.0):
    out = {"grpo.use_dynamic_sampling": v}
    if v:
        out["grpo.dynamic_sampling_max_gen_batches"] = max_rounds
        out["grpo.batch_multiplier"] = multiplier
    return out


def _must_be_zero(name: str, why: str) -> Transform:
    """A field NeMo-RL v0.7.0 cannot express: refused unless 0, with the reason."""
    def refuse(v, _):
        if v:
            raise ValueError(f"{name}={v}: {why}. Set it to 0 for the cluster backend.")
        return {}
    return refuse


_entropy = _must_be_zero("entropy_coef", "NeMo-RL v0.7.0 has no entropy bonus; the paper uses none (RECIPE.md §5)")
_kl_discount = _must_be_zero("mopd.kl_discount", "NeMo-RL v0.7.0's opd advantage is the paper's Eq. 2 (each token's "
                             "own log-ratio, discount 0)")
_forward_kl = _must_be_zero("mopd.forward_kl_coef", "NeMo-RL v0.7.0's opd loss is the paper's sampled-token reverse "
                            "KL alone (Eq. 4)")


def _token_level(v, _):
    # MOPD: Eq. 4 per-sequence token mean = token_level_loss false; the replication's batch-global = true.
    return v == "token_level"


FIELD_MAP: tuple[Rule, ...] = (
    # --- optimizer and schedule (SFT and RL alike; Megatron backend)
    Rule("lr", (f"{OPT}.lr",)),
    Rule("min_lr", (f"{OPT}.min_lr",), _min_lr),
    Rule("lr_schedule", (f"{SCHED}.lr_decay_style",)),
    Rule("lr_schedule", (f"{SCHED}.lr_decay_iters",), _decay_iters, note="decay over planned_steps (SFT) or steps"),
    Rule("warmup_steps", (f"{SCHED}.lr_warmup_iters",)),
    Rule("warmup_start_lr", (f"{SCHED}.lr_warmup_init",), _warmup_init),
    Rule("adam_betas", (f"{OPT}.adam_beta1", f"{OPT}.adam_beta2"),
         lambda v, _: {f"{OPT}.adam_beta1": v[0], f"{OPT}.adam_beta2": v[1]}),
    Rule("weight_decay", (f"{OPT}.weight_decay",)),
    Rule("grad_clip", ("policy.max_grad_norm",)),
    Rule("save_every", ("checkpointing.save_period",)),
    Rule("save_every", ("sft.val_period",), kinds=("sft",),
         note="validate at every save so checkpointing.metric_name (val:val_loss) exists for keep_top_k"),
    # --- SFT
    Rule("steps", ("sft.max_num_steps",), kinds=("sft",)),
    Rule("global_batch", ("policy.train_global_batch_size",), kinds=("sft",)),
    Rule("max_seq_len", ("policy.max_total_sequence_length",), kinds=("sft",)),
    Rule("pack_length", ("policy.sequence_packing.enabled",), lambda v, _: v is not None, kinds=("sft",),
         note="256K packing (RECIPE.md §3): packs fill max_seq_len"),
    # --- GRPO family and MOPD
    Rule("prompts_per_step", ("grpo.num_prompts_per_step",), kinds=("grpo", "mopd")),
    Rule("generations_per_prompt", ("grpo.num_generations_per_prompt",), kinds=("grpo", "mopd")),
    # one optimizer step per rollout batch (RECIPE.md §5): global batch = prompts x generations
    Rule("generations_per_prompt", ("policy.train_global_batch_size",),
         lambda v, s: v * s.prompts_per_step, kinds=("grpo", "mopd")),
    Rule("steps", ("grpo.max_num_steps",), lambda v, s: _require_steps(v), kinds=("grpo", "mopd")),
    Rule("max_turns", ("grpo.max_rollout_turns",), lambda v, _: v if v is not None else 1, kinds=("grpo",),
         note="agentic SWE: most environment turns per rollout; single-turn stages 1"),
    Rule("max_response_tokens", ("policy.generation.max_new_tokens",), kinds=("grpo", "mopd")),
    Rule("max_total_sequence_length", ("policy.max_total_sequence_length",), _s_total, kinds=("grpo", "mopd")),
    Rule("max_input_tokens", ("data.max_input_seq_length",), kinds=("grpo", "mopd")),
    Rule("temperature", ("policy.generation.temperature",), kinds=("grpo", "mopd")),
    Rule("top_p", ("policy.generation.top_p",), kinds=("grpo", "mopd")),
    Rule("kl_coef", ("loss_fn.reference_policy_kl_penalty",), kinds=("grpo", "mopd")),
    Rule("entropy_coef", (), _entropy, kinds=("grpo", "mopd")),
    Rule("dynamic_filtering", ("grpo.use_dynamic_sampling",),
         lambda v, s: _dynamic(v, s.dynamic_filtering_max_rounds, s.batch_multiplier),
         kinds=("grpo", "mopd")),
    Rule("overlong_filtering", ("grpo.overlong_filtering",), kinds=("grpo", "mopd")),
    Rule("overlong_reward_zero", ("grpo.reward_shaping.enabled",), _reward_shaping, kinds=("grpo", "mopd")),
    Rule("is_correction", ("loss_fn.use_importance_sampling_correction",), kinds=("grpo", "mopd")),
    Rule("is_seq_mask_threshold", ("grpo.seq_logprob_error_threshold",), kinds=("grpo", "mopd")),
    Rule("val_every", ("grpo.val_period",), kinds=("grpo", "mopd")),
    Rule("val_every", ("grpo.val_at_end",), lambda v, _: True, kinds=("grpo", "mopd"),
         note="always validate the final checkpoint (teacher selection reads it)"),
    Rule("mode", ("policy.tokenizer.chat_template_kwargs.enable_thinking",), _thinking, kinds=("grpo", "mopd")),
    Rule("advantage_estimator", ("grpo.adv_estimator.name",), kinds=("grpo", "mopd")),
    # --- MOPD (paper Eq. 3 masking bounds expressed as ICE-POP, NEMO_RL.md §5)
    Rule("importance_mask_low", ("loss_fn.truncated_importance_sampling_ratio_min",), kinds=("mopd",)),
    Rule("importance_mask_high", ("loss_fn.truncated_importance_sampling_ratio",), kinds=("mopd",)),
    Rule("loss_normalization", ("loss_fn.token_level_loss",), _token_level, kinds=("mopd",)),
    Rule("kl_discount", (), _kl_discount, kinds=("mopd",)),
    Rule("forward_kl_coef", (), _forward_kl, kinds=("mopd",)),
)

# Fields that are not NeMo-RL keys, and where they go instead.
NOT_NEMO_RL_KEYS: dict[str, str] = {
    "domains": "select the NeMo-Gym environments and agents (recipe.cluster.gym)",
    "domain_weights": "applied when the NeMo-Gym JSONL is built (data curation), not a NeMo-RL key",
    "reward": "selects Gym resources servers (recipe.cluster.gym)",
    "if_grading": "the instruction-following reward's grading (all / fraction): a field of the Gym rows "
                  "(grading_mode), which the data rendering writes, not a NeMo-RL key",
    "teacher_routing": "on_policy_distillation.teacher_model_by_agent_name via teachers.json (recipe.cluster.gym)",
    "prompt_mask_max_reward": "agentless SWE prompt mask: no v0.7.0 key; reported as a deviation in the rendered header",
    "implemented_locally": "local backend only",
    "rollout": "agentic rollouts on the cluster are the NeMo-Gym swe_agents agent (recipe.cluster.gym)",
    "turn_time_limit_s": "local sandbox limit per agent action; NeMo-Gym swe_agents sets its own",
    "hard_prompt_filter_samples": "applied when the Code-RL prompt set is curated (paper: GPT-OSS-120B 8/8 filter)",
    "dynamic_filtering_max_rounds": "written as grpo.dynamic_sampling_max_gen_batches by the dynamic_filtering rule",
    "batch_multiplier": "written as grpo.batch_multiplier by the dynamic_filtering rule",
    "judge": "the RLHF judge: NeMo-Gym genrm_compare resources-server settings (recipe.cluster.gym)",
    "init_from": "the stage's input checkpoint (policy.model_name), resolved by the stage plan",
    "teacher_candidate_every": "checkpointing.save_period already saves every candidate step on the cluster",
    "log_every": "NeMo-RL logs every step",
    "mode_mix": "tiny-domain rendering only (SFT data is already rendered per mode)",
    "domain_fraction": "tiny-domain SFT pool only (the released SFT data is mixed by data.sft_data.configs)",
    "planned_steps": "SFT schedule length: becomes lr_decay_iters (rule for lr_schedule above)",
}

# Algorithm rules, not hyperparameters: the same for every GRPO stage (RECIPE.md §5) ...
GRPO_RULES: dict[str, Any] = {
    "grpo.normalize_rewards": True,             # A_i = (r_i - mean) / std
    "grpo.use_leave_one_out_baseline": False,   # plain group mean
    "grpo.adv_estimator.normalize_rewards": True,
    "grpo.adv_estimator.use_leave_one_out_baseline": False,
    "grpo.async_grpo.enabled": False,           # strict on-policy
    "loss_fn.token_level_loss": True,           # DAPO-style global token mean
    "loss_fn.force_on_policy_ratio": False,
    "grpo.max_num_epochs": 1000000,             # steps, not epochs, end a stage
}
# ... and for MOPD (RECIPE.md §6, NEMO_RL.md §5: the v0.7.0 opd implementation needs async GRPO).
MOPD_RULES: dict[str, Any] = {
    "grpo.normalize_rewards": True,
    "grpo.use_leave_one_out_baseline": False,
    "grpo.async_grpo.enabled": True,
    "grpo.async_grpo.max_trajectory_age_steps": 1,
    "loss_fn.disable_ppo_ratio": True,                  # REINFORCE form: the only gradient path is log pi_train
    "loss_fn.truncated_importance_sampling_type": "icepop",  # mask, not clip, out-of-band tokens (Eq. 3)
    "loss_fn.reference_policy_kl_penalty": 0.0,         # no KL to a reference in MOPD (Eq. 4)
    "on_policy_distillation.enabled": True,
    "on_policy_distillation.strict_agent_name_match": True,  # NEMO_RL.md §5 [recommendation]: unmapped agents fail
    "on_policy_distillation.deduplicate_shared_teacher_checkpoints": True,
    "grpo.max_num_epochs": 1000000,
}
# Nano-3 numerics for every RL stage (NEMO_RL.md §8) and the Megatron path for every stage (NEMO_RL.md §2).
BACKEND_RULES: dict[str, Any] = {
    "policy.megatron_cfg.enabled": True,
    "policy.dtensor_cfg.enabled": False,
    "policy.optimizer": None,     # remove the torch optimizer/scheduler: Megatron's own are used
    "policy.scheduler": None,
}
SFT_RULES: dict[str, Any] = {
    "sft.max_num_epochs": 1000000,  # steps, not epochs, end a stage (33,000 steps is ~1.5 epochs, RECIPE.md §3)
}
RL_NUMERICS: dict[str, Any] = {
    "policy.megatron_cfg.freeze_moe_router": True,
    "policy.megatron_cfg.moe_router_load_balancing_type": "none",
    "policy.megatron_cfg.moe_aux_loss_coeff": 0.0,
    "policy.megatron_cfg.moe_router_dtype": "fp32",
    "policy.generation.vllm_kwargs.compilation_config.backend": "eager",
    "policy.generation.vllm_kwargs.mamba_ssm_cache_dtype": "float32",
}


def stage_values(stage_cfg: Any, kind: str) -> dict[str, Any]:
    """Dotted NeMo-RL key -> value for one stage section (rules applied after the table, table wins on clash)."""
    out: dict[str, Any] = {}
    out.update(BACKEND_RULES)
    if kind == "sft":
        out.update(SFT_RULES)
    if kind in ("grpo", "mopd"):
        out.update(RL_NUMERICS)
        out.update(GRPO_RULES if kind == "grpo" else MOPD_RULES)
    for rule in FIELD_MAP:
        if kind in rule.kinds and hasattr(stage_cfg, rule.field):
            out.update(rule.values(stage_cfg))
    if kind == "mopd":
        # Eq. 3's weight w_t is the train/inference ratio itself, so IS correction is always on for MOPD, and the
        # v0.7.0 opd estimator needs real prev_logprobs, i.e. seq_logprob_error_threshold set (NEMO_RL.md §5).
        out["loss_fn.use_importance_sampling_correction"] = True
        if getattr(stage_cfg, "is_seq_mask_threshold", None) is None:
            raise ValueError("mopd.is_seq_mask_threshold is null: NeMo-RL's opd estimator needs "
                             "grpo.seq_logprob_error_threshold set (NEMO_RL.md §5; the replication uses 2.0). "
                             "Set mopd.is_seq_mask_threshold in the profile (or --set mopd.is_seq_mask_threshold=2.0)")
    return out


def resource_overrides(res: StageResources, kind: str) -> dict[str, Any]:
    """Cluster-only keys from ``cluster.stages.<stage>``: nodes, GPUs, Megatron and vLLM layout."""
    p = res.parallelism
    mc = "policy.megatron_cfg"
    out: dict[str, Any] = {
        "cluster.num_nodes": res.nodes,
        "cluster.gpus_per_node": res.gpus_per_node,
        f"{mc}.tensor_model_parallel_size": p.tensor,
        f"{mc}.pipeline_model_parallel_size": p.pipeline,
        f"{mc}.context_parallel_size": p.context,
        f"{mc}.expert_model_parallel_size": p.expert,
        f"{mc}.sequence_parallel": p.sequence_parallel,
        # NeMo-RL needs sequence lengths divisible by 2 * TP * CP with SP + CP (grpo_nanov3.yaml's formula).
        "policy.make_sequence_length_divisible_by": 2 * p.tensor * p.context,
    }
    if kind in ("grpo", "mopd"):
        out["policy.generation.vllm_cfg.tensor_parallel_size"] = p.vllm_tensor
        if res.generation_nodes:
            out["policy.generation.colocated.enabled"] = False
            out["policy.generation.colocated.resources.num_nodes"] = res.generation_nodes
            out["policy.generation.colocated.resources.gpus_per_node"] = res.gpus_per_node
        else:
            out["policy.generation.colocated.enabled"] = True
    if kind == "mopd":
        t = res.teachers
        if t is None:
            raise ValueError("cluster.stages.mopd.teachers is required: MOPD teachers run as non-colocated Megatron "
                             "workers (NEMO_RL.md §5); add e.g. teachers: {nodes_per_teacher: 1, tensor: 2, context: 4}")
        tc = "on_policy_distillation.non_colocated_teachers"
        out.update({
            f"{tc}.enabled": True,
            f"{tc}.default_teacher_cfg.tensor_model_parallel_size": t.tensor,
            f"{tc}.default_teacher_cfg.pipeline_model_parallel_size": t.pipeline,
            f"{tc}.default_teacher_cfg.context_parallel_size": t.context,
            f"{tc}.default_teacher_cfg.expert_model_parallel_size": t.expert,
            f"{tc}.default_teacher_cfg.num_nodes": t.nodes_per_teacher,
            f"{tc}.default_teacher_cfg.gpus_per_node": res.gpus_per_node,
            f"{tc}.default_teacher_cfg.precision": "bf16",
            f"{tc}.default_teacher_cfg.micro_batch_size": t.micro_batch_size,
        })
    return out


def mapped_fields() -> set[str]:
    return {r.field for r in FIELD_MAP}
