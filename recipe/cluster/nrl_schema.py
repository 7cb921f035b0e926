"""Types of NeMo-RL v0.7.0's config classes, written down as data for the validator (``recipe.cluster.config_checks``).

NeMo-RL validates a loaded config against its ``MasterConfig`` (TypedDicts, and pydantic models for a few
sections). NeMo-RL cannot be installed here, so the types of the keys this project renders are transcribed from
the source at tag v0.7.0 (read with the search tools; nothing is copied). Each entry names the class and file it
comes from. The spec language is tiny: ``int``, ``float`` (an int is accepted, as pydantic's lax mode and the
example configs do; a bool is not), ``bool``, ``str``, ``None``, ``map`` (any mapping), ``list``, joined by ``|``.
``NotRequired[...]`` only means the key may be absent: a present ``null`` must still match the type, which is how
``grpo.reward_shaping.overlong_buffer_length: null`` failed at start-up.

Keys under ``OPEN_PREFIXES`` are free-form maps passed through to another program (NeMo-Gym server configs, vLLM
kwargs, HF config overrides, the teacher map): any sub-key and type is accepted there. A rendered key that is in
neither table is checked against the release's own example configs (it must exist there, with a value of the same
type unless the release value is null) — see ``validate.type_problems``.
"""
from __future__ import annotations

from typing import Any

# --- nemo_rl/algorithms/grpo.py @ v0.7.0: GRPOConfig, AsyncGRPOConfig, AdvEstimatorConfig (TypedDicts)
_GRPO = {
    "grpo.num_prompts_per_step": "int",
    "grpo.num_generations_per_prompt": "int",
    "grpo.num_val_generations_per_prompt": "int",
    "grpo.max_num_epochs": "int",
    "grpo.max_num_steps": "int",
    "grpo.max_rollout_turns": "int",
    "grpo.normalize_rewards": "bool",
    "grpo.use_leave_one_out_baseline": "bool",
    "grpo.val_period": "int",
    "grpo.val_batch_size": "int|None",
    "grpo.val_at_start": "bool",
    "grpo.val_at_end": "bool",
    "grpo.max_val_samples": "int|None",
    "grpo.seed": "int",
    "grpo.overlong_filtering": "bool",
    "grpo.use_dynamic_sampling": "bool",
    "grpo.dynamic_sampling_max_gen_batches": "int",
    "grpo.batch_multiplier": "float",
    "grpo.seq_logprob_error_threshold": "float|None",
    "grpo.async_grpo": "map",
    "grpo.async_grpo.enabled": "bool",
    "grpo.async_grpo.max_trajectory_age_steps": "int",
    "grpo.async_grpo.in_flight_weight_updates": "bool",
    "grpo.async_grpo.recompute_kv_cache_after_weight_updates": "bool",
    "grpo.adv_estimator.name": "str",
    "grpo.adv_estimator.normalize_rewards": "bool",
    "grpo.adv_estimator.use_leave_one_out_baseline": "bool",
    "grpo.adv_estimator.minus_baseline": "bool",
    # RewardScalingConfig (same file)
    "grpo.reward_scaling.enabled": "bool",
    "grpo.reward_scaling.source_min": "float",
    "grpo.reward_scaling.source_max": "float",
    "grpo.reward_scaling.target_min": "float",
    "grpo.reward_scaling.target_max": "float",
}
# --- nemo_rl/algorithms/reward_functions.py @ v0.7.0: RewardShapingConfig. The DAPO knobs are NotRequired numbers:
# leave them out when unused; null is not a number.
_REWARD_SHAPING = {
    "grpo.reward_shaping.enabled": "bool",
    "grpo.reward_shaping.overlong_buffer_length": "int",
    "grpo.reward_shaping.overlong_buffer_penalty": "float",
    "grpo.reward_shaping.max_response_length": "int",
    "grpo.reward_shaping.stop_properly_penalty_coef": "float|None",
}
# --- nemo_rl/algorithms/loss_functions.py @ v0.7.0: ClippedPGLossConfig
_LOSS = {
    "loss_fn.reference_policy_kl_penalty": "float",
    "loss_fn.reference_policy_kl_type": "str",
    "loss_fn.kl_input_clamp_value": "float|None",
    "loss_fn.kl_output_clamp_value": "float|None",
    "loss_fn.ratio_clip_min": "float",
    "loss_fn.ratio_clip_max": "float",
    "loss_fn.ratio_clip_c": "float|None",
    "loss_fn.use_on_policy_kl_approximation": "bool",
    "loss_fn.use_importance_sampling_correction": "bool",
    "loss_fn.truncated_importance_sampling_ratio": "float|None",
    "loss_fn.truncated_importance_sampling_type": "str|None",
    "loss_fn.truncated_importance_sampling_ratio_min": "float|None",
    "loss_fn.token_level_loss": "bool",
    "loss_fn.sequence_level_importance_ratios": "bool",
    "loss_fn.disable_ppo_ratio": "bool",
    "loss_fn.force_on_policy_ratio": "bool",
}
# --- nemo_rl/algorithms/sft.py @ v0.7.0: SFTConfig
_SFT = {
    "sft.max_num_epochs": "int",
    "sft.max_num_steps": "int",
    "sft.val_period": "int",
    "sft.val_batches": "int",
    "sft.val_global_batch_size": "int",
    "sft.val_micro_batch_size": "int",
    "sft.val_at_start": "bool",
    "sft.val_at_end": "bool",
    "sft.seed": "int",
}
# --- nemo_rl/utils/checkpoint.py @ v0.7.0: CheckpointingConfig
_CKPT = {
    "checkpointing.enabled": "bool",
    "checkpointing.checkpoint_dir": "str",
    "checkpointing.metric_name": "str|None",
    "checkpointing.higher_is_better": "bool",
    "checkpointing.save_period": "int",
    "checkpointing.keep_top_k": "int|None",
    "checkpointing.checkpoint_must_save_by": "str|None",
    "checkpointing.save_optimizer": "bool",
    "checkpointing.model_save_format": "str|None",
    "checkpointing.save_consolidated": "bool",
}
# --- nemo_rl/utils/logger.py @ v0.7.0: LoggerConfig (+ GRPOLoggerConfig.num_val_samples_to_print)
_LOGGER = {
    "logger.log_dir": "str",
    "logger.wandb_enabled": "bool",
    "logger.tensorboard_enabled": "bool",
    "logger.mlflow_enabled": "bool",
    "logger.swanlab_enabled": "bool",
    "logger.monitor_gpus": "bool",
    "logger.num_val_samples_to_print": "int",
}
# --- nemo_rl/distributed/virtual_cluster.py @ v0.7.0: ClusterConfig
_CLUSTER = {"cluster.gpus_per_node": "int", "cluster.num_nodes": "int"}
# --- nemo_rl/models/policy/__init__.py @ v0.7.0: PolicyConfig, TokenizerConfig, MegatronConfig,
#     MegatronOptimizerConfig, MegatronSchedulerConfig, SequencePackingConfig
_POLICY = {
    "policy.model_name": "str",
    "policy.tokenizer.name": "str",
    "policy.tokenizer.chat_template": "str|None",
    "policy.tokenizer.chat_template_kwargs": "map|None",
    "policy.train_global_batch_size": "int",
    "policy.train_micro_batch_size": "int",
    "policy.max_total_sequence_length": "int",
    "policy.precision": "str",
    "policy.max_grad_norm": "float|None",
    "policy.make_sequence_length_divisible_by": "int",
    "policy.optimizer": "map|None",
    "policy.scheduler": "map|list|None",
    "policy.sequence_packing.enabled": "bool",
    "policy.dtensor_cfg.enabled": "bool",
    "policy.megatron_cfg.enabled": "bool",
    "policy.megatron_cfg.tensor_model_parallel_size": "int",
    "policy.megatron_cfg.pipeline_model_parallel_size": "int",
    "policy.megatron_cfg.context_parallel_size": "int",
    "policy.megatron_cfg.expert_model_parallel_size": "int",
    "policy.megatron_cfg.sequence_parallel": "bool",
    "policy.megatron_cfg.freeze_moe_router": "bool",
    "policy.megatron_cfg.moe_router_dtype": "str|None",
    "policy.megatron_cfg.moe_router_load_balancing_type": "str",
    "policy.megatron_cfg.moe_aux_loss_coeff": "float",
    "policy.megatron_cfg.optimizer.lr": "float",
    "policy.megatron_cfg.optimizer.min_lr": "float",
    "policy.megatron_cfg.optimizer.weight_decay": "float",
    "policy.megatron_cfg.optimizer.adam_beta1": "float",
    "policy.megatron_cfg.optimizer.adam_beta2": "float",
    "policy.megatron_cfg.scheduler.lr_decay_style": "str",
    "policy.megatron_cfg.scheduler.lr_decay_iters": "int|None",
    "policy.megatron_cfg.scheduler.lr_warmup_iters": "int",
    "policy.megatron_cfg.scheduler.lr_warmup_init": "float",
}
# --- nemo_rl/models/generation/interfaces.py (GenerationConfig) and nemo_rl/models/generation/vllm/config.py
#     (VllmConfig) @ v0.7.0
_GENERATION = {
    "policy.generation.backend": "str",
    "policy.generation.max_new_tokens": "int",
    "policy.generation.temperature": "float",
    "policy.generation.top_p": "float",
    "policy.generation.top_k": "int|None",
    "policy.generation.colocated.enabled": "bool",
    "policy.generation.colocated.resources.gpus_per_node": "int|None",
    "policy.generation.colocated.resources.num_nodes": "int|None",
    "policy.generation.vllm_cfg.tensor_parallel_size": "int",
    "policy.generation.vllm_cfg.async_engine": "bool",
    "policy.generation.vllm_cfg.expose_http_server": "bool",
}
# --- nemo_rl/data/__init__.py @ v0.7.0: DataConfig (dataset blocks are per-dataset dicts)
_DATA = {
    "data.max_input_seq_length": "int|None",
    "data.shuffle": "bool",
    "data.num_workers": "int",
    "data.add_bos": "bool",
    "data.add_eos": "bool",
    "data.add_generation_prompt": "bool",
    "data.train.data_path": "str",
    "data.validation.data_path": "str",
    "data.train.dataset_name": "str",
    "data.validation.dataset_name": "str",
}
# --- examples/nemo_gym/run_grpo_nemo_gym.py + nemo_rl/environments/nemo_gym.py @ v0.7.0: env block
_ENV = {
    "env.should_use_nemo_gym": "bool",
    "env.should_mask_flagged_samples": "bool",
    "env.nemo_gym.config_paths": "list",
}
# --- nemo_rl/algorithms/distillation/opd (on_policy_distillation pydantic model, extra="allow") @ v0.7.0
_OPD = {
    "on_policy_distillation": "map|None",
    "on_policy_distillation.enabled": "bool",
    "on_policy_distillation.teacher_model_by_agent_name": "map",
    "on_policy_distillation.default_teacher_alias": "str|None",
    "on_policy_distillation.strict_agent_name_match": "bool",
    "on_policy_distillation.deduplicate_shared_teacher_checkpoints": "bool",
    "on_policy_distillation.non_colocated_teachers.enabled": "bool",
    "on_policy_distillation.non_colocated_teachers.teacher_overrides": "map",
    **{f"on_policy_distillation.non_colocated_teachers.default_teacher_cfg.{k}": "int" for k in (
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
        "expert_model_parallel_size", "num_nodes", "gpus_per_node", "micro_batch_size")},
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.precision": "str",
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.megatron_cfg_overrides": "map",
}

SCHEMA: dict[str, str] = {**_GRPO, **_REWARD_SHAPING, **_LOSS, **_SFT, **_CKPT, **_LOGGER, **_CLUSTER, **_POLICY,
                          **_GENERATION, **_DATA, **_ENV, **_OPD}

# Free-form maps handed to other programs: any sub-key / type.
OPEN_PREFIXES = (
    "env.nemo_gym.",                                   # NeMo-Gym global config (server blocks, interpolation values)
    "on_policy_distillation.teacher_model_by_agent_name.",
    "on_policy_distillation.non_colocated_teachers.teacher_overrides.",
    "on_policy_distillation.non_colocated_teachers.default_teacher_cfg.megatron_cfg_overrides.",
    "policy.generation.vllm_kwargs.",
    "policy.hf_config_overrides.",
    "policy.tokenizer.chat_template_kwargs.",
)

MISSING = "???"  # OmegaConf's mandatory-value marker: NeMo-RL/Gym fail when it is read


def type_ok(value: Any, spec: str) -> bool:
    for t in spec.split("|"):
        if t == "None" and value is None:
            return True
        if t == "bool" and isinstance(value, bool):
            return True
        if t == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if t == "str" and isinstance(value, str):
            return True
        if t == "map" and isinstance(value, dict):
            return True
        if t == "list" and isinstance(value, list):
            return True
    return False


def kind_of(value: Any) -> str:
    """The spec word of a release example value (``float`` for numbers, so an int literal matches a float key)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    return type(value).__name__
