"""Per-stage hyperparameter sections: SFT, the GRPO family and MOPD.

The field names are the vocabulary shared by both backends: the local trainer reads them directly and the
cluster backend maps each one to a NeMo-RL key (``recipe/cluster``). Values live only in the profile YAMLs
(``profiles/<name>/stages.yaml``); paper values cite RECIPE.md / the paper there.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from recipe.config.judge_section import JudgeConfig
from recipe.config.strict_section import AssignmentCheckedSection

Mode = Literal["thinking", "instruct", "as_prompted"]


class OptimizerMixin(AssignmentCheckedSection):
    lr: float = Field(gt=0, description="Peak learning rate.")
    min_lr: float = Field(0.0, ge=0, description="Final LR of a decaying schedule (cosine/linear).")
    lr_schedule: Literal["constant", "cosine", "linear"] = Field(
        "constant", description="Shape after warm-up: constant, cosine decay to min_lr, or linear decay to min_lr.")
    warmup_steps: int = Field(0, ge=0, description="Linear warm-up steps from warmup_start_lr to lr.")
    warmup_start_lr: Optional[float] = Field(None, ge=0, description="LR at step 0 of the warm-up (default lr/10).")
    adam_betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW (beta1, beta2).")
    weight_decay: float = Field(0.0, ge=0)
    grad_clip: float = Field(1.0, gt=0, description="Global grad-norm clip.")


class SFTConfig(OptimizerMixin):
    """Stage 0: supervised fine-tuning, cross-entropy on assistant tokens only."""

    steps: int = Field(ge=0, description="Optimizer steps actually run; 0: no SFT, the start model is saved as the "
                       "stage's checkpoint (an already instruction-tuned model, e.g. the small profile's CPU set).")
    planned_steps: Optional[int] = Field(None, description="Length the LR schedule is planned for (default: steps).")
    global_batch: int = Field(gt=0, description="Sequences (packed sequences at paper scale) per optimizer step.")
    pack_length: Optional[int] = Field(None, description="Packed sequence length in tokens (None = no packing).")
    max_seq_len: int = Field(gt=0, description="Longest (packed) training sequence in tokens.")
    mode_mix: dict[str, float] = Field(
        default_factory=lambda: {"thinking": 0.5, "instruct": 0.5},
        description="Share of examples rendered in thinking vs instruct mode (tiny domains only).")
    domain_fraction: dict[str, float] = Field(
        default_factory=dict, description="Size of a domain's SFT pool as a fraction of its SFT records: below 1 the "
        "first ones in file order, above 1 the records repeated (2.5: every record twice, then the first half once "
        "more). Default 1.0 each; tiny domains only: released SFT data is mixed by its own configs.")
    save_every: int = Field(100, gt=0, description="Atomic step checkpoint every N steps (resume point).")
    log_every: int = Field(10, gt=0)

    @model_validator(mode="after")
    def _fractions_in_range(self) -> "SFTConfig":
        bad = {d: f for d, f in self.domain_fraction.items() if not f > 0.0}
        if bad:
            raise ValueError(f"domain_fraction: each value must be above 0, got {bad}")
        return self


class RLStageConfig(OptimizerMixin):
    """One on-policy RL stage (GRPO family or MOPD). Exactly one optimizer update per rollout batch."""

    implemented_locally: bool = Field(
        True, description="Whether the local (in-process) backend can run this stage; a stage that is not "
        "refuses loudly when selected instead of being skipped.")
    domains: list[str] = Field(description="Domains whose prompts make up this stage's pool.")
    domain_weights: Optional[dict[str, float]] = Field(None, description="Pool mixture (default: uniform).")
    mode: Mode = Field("thinking", description="Reasoning mode of the rollouts.")
    advantage_estimator: Literal["grpo", "opd"] = "grpo"
    prompts_per_step: int = Field(gt=0)
    generations_per_prompt: int = Field(gt=0)
    max_response_tokens: int = Field(gt=0, description="Generation cap; a response hitting it is 'overlong'.")
    max_input_tokens: Optional[int] = Field(None, description="Prompt cap (None = no separate cap).")
    max_total_sequence_length: Optional[int] = Field(None, description="Prompt + response cap.")
    steps: Optional[int] = Field(
        ..., gt=0, description="Optimizer steps; null = not reported, run to a validation plateau (cluster only).")
    max_turns: Optional[int] = Field(None, gt=0, description="Agentic stages: most environment turns per rollout.")
    rollout: Literal["single_turn", "agentic"] = Field(
        "single_turn", description="agentic: multi-turn tool loop in the sandbox (recipe.train.agentic_rollouts), one "
        "episode per rollout, execution-based reward.")
    turn_time_limit_s: float = Field(2.0, gt=0, description="Agentic stages: sandbox CPU-time limit of one action.")
    hard_prompt_filter_samples: Optional[int] = Field(
        None, gt=0, description="Before training, sample this many responses per RL prompt with the input "
        "checkpoint and drop prompts solved by all of them (Code RL: 'minus prompts solved 8/8', RECIPE.md §4.1).")
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    kl_coef: float = Field(0.0, ge=0, description="KL-to-reference coefficient (only RLHF sets one).")
    entropy_coef: float = Field(0.0, ge=0)
    dynamic_filtering: bool = Field(True, description="Drop prompt groups whose rewards are all equal.")
    dynamic_filtering_max_rounds: int = Field(
        1, ge=1, description="Keep the batch full (DAPO): sample the missing number of prompts again until "
        "prompts_per_step groups are kept, at most this many generation rounds per step; the rest is the logged "
        "shortfall (NeMo-RL dynamic_sampling_max_gen_batches). 1 = no refill.")
    batch_multiplier: float = Field(
        1.0, ge=1.0, le=8.0, description="With dynamic filtering, a generation round samples this many times the "
        "prompts it needs (round 0: prompts_per_step, a refill round: the shortfall), rounded up; kept groups beyond "
        "prompts_per_step are not trained (NeMo-RL grpo.batch_multiplier). Oversampling in one round replaces refill "
        "rounds, each of which costs a whole decode loop.")
    overlong_filtering: bool = Field(False, description="Exclude truncated responses from the loss.")
    overlong_reward_zero: bool = Field(True, description="A truncated (unfinished) response gets reward 0.")
    is_correction: bool = Field(False, description="Train/inference mismatch importance-sampling correction "
                                "(cluster backend: vLLM samples, Megatron trains; the local backend samples and "
                                "trains with the same weights in one process, so it has no mismatch to correct).")
    is_seq_mask_threshold: Optional[float] = Field(
        None, description="Mask sequences whose logprob error exceeds this (cluster backend, see is_correction).")
    prompt_mask_max_reward: Optional[float] = Field(
        None, description="Agentless SWE: no loss for prompts whose best rollout reward is <= this.")
    reward: Literal["verifier", "pairwise_judge", "llm_judge", "teacher"] = "verifier"
    if_grading: Optional[Literal["all", "fraction"]] = Field(
        None, description="Instruction-following rewards: 1 only when every instruction is followed (`all`, the "
        "paper's IF-RL) or the share followed (`fraction`, IFEval's instruction-level view); null: each record's own "
        "grading_mode. Validation keeps the record's own.")
    judge: Optional[JudgeConfig] = Field(None, description="reward: pairwise_judge: the judge and its aggregation.")
    init_from: Optional[str] = Field(
        None, description="Stage whose checkpoint this stage starts from (default: the previous stage in the plan; "
        "rlhf_branch: sft, the paper's RLHF-from-SFT teacher branch).")
    teacher_candidate_every: int = Field(
        0, ge=0, description="Also save an intermediate checkpoint every N steps as an MOPD teacher candidate "
        "(0 = only the final checkpoint is a candidate).")
    save_every: int = Field(10, gt=0)
    val_every: int = Field(0, ge=0, description="Validate every N steps (0 = only at the end).")
    log_every: int = Field(1, gt=0)

    @model_validator(mode="after")
    def _check(self):
        if self.steps is None and self.implemented_locally:
            raise ValueError("steps: null is only allowed for stages that are not implemented locally")
        if self.reward == "pairwise_judge" and self.judge is None:
            raise ValueError("reward: pairwise_judge needs a judge section (<stage>.judge.kind ...)")
        if self.rollout == "agentic" and self.max_turns is None:
            raise ValueError("rollout: agentic needs max_turns (the turn cap of an episode)")
        if self.advantage_estimator == "grpo" and self.generations_per_prompt < 2:
            raise ValueError("grpo needs generations_per_prompt >= 2 (group-normalised advantage); "
                             "set generations_per_prompt or use advantage_estimator: opd")
        return self


class MOPDConfig(RLStageConfig):
    """Multi-domain on-policy distillation (paper §4.4, Eq. 2-4)."""

    advantage_estimator: Literal["grpo", "opd"] = "opd"
    reward: Literal["verifier", "pairwise_judge", "llm_judge", "teacher"] = "teacher"
    importance_mask_low: float = Field(0.5, gt=0, description="Tokens with pi_train/pi_inf below this get weight 0.")
    importance_mask_high: float = Field(2.0, gt=0, description="Tokens with pi_train/pi_inf above this get weight 0.")
    loss_normalization: Literal["per_sequence", "token_level"] = Field(
        "per_sequence", description="Eq. 4 per-sequence token mean, or the replication's batch-global mean.")
    kl_discount: float = Field(
        0.0, ge=0, le=1, description="0: the paper's Eq. 2, each token's advantage is its own log-ratio. > 0: the "
        "discounted sum of the log-ratios from that token to the answer's end, so a token that leads into text the "
        "teacher would not write carries that cost (tinker-cookbook's kl_discount_factor).")
    forward_kl_coef: float = Field(
        0.0, ge=0, description="0: the paper's Eq. 4, the sampled-token reverse KL alone. > 0: plus this times the "
        "teacher's whole-vocabulary KL(teacher || student) at each response token the student wrote, which raises "
        "the token the teacher would write even where the student never samples it.")
    teacher_routing: dict[str, str] = Field(
        default_factory=dict,
        description="domain -> teacher slot. A slot is 'best:<domain-group>' (best validation checkpoint for "
        "those domains from teachers.json) or 'stage:<stage>' (a fixed stage's checkpoint, e.g. stage:sft).")

    @model_validator(mode="after")
    def _bounds(self):
        if not self.importance_mask_low < 1.0 < self.importance_mask_high:
            raise ValueError(f"importance mask must bracket 1.0, got [{self.importance_mask_low}, {self.importance_mask_high}]")
        return self


class SWEConfig(AssignmentCheckedSection):
    """SWE RL: agentless first, then execution-based agentic (RECIPE.md §4.1 7a/7b). Locally, as on the cluster
    (``recipe.cluster.render``), the agentless phase's checkpoint is ``<NN>_swe_rl/agentless_checkpoint`` and the
    agentic phase starts from it; the stage's checkpoint is the agentic result."""

    implemented_locally: bool = False
    agentless: RLStageConfig
    agentic: RLStageConfig
