"""The root config: one typed model composed of one section per concern.

Every hyperparameter lives once, in a profile YAML (``profiles/<name>/*.yaml``); this module only says what
keys exist, their types and what they mean. Sections owned by other parts (``verify``, ``data``, ``hub``,
``cluster``) are defined next to this file in their own modules.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, PositiveInt, field_validator, model_validator

from recipe.config.benchmarks_section import BenchmarksSection
from recipe.config.cluster_section import ClusterSection
from recipe.config.data_section import DataSection
from recipe.config.hub_section import HubSection
from recipe.config.model_section import ModelSection
from recipe.config.olympiad_section import OlympiadSection
from recipe.config.stages import MOPDConfig, RLStageConfig, SFTConfig, SWEConfig
from recipe.config.strict_section import StrictSection
from recipe.config.verify_section import VerifySection

# The cascade, in run order (RECIPE.md §4, paper §4.1 Fig. 2). One list for both backends. ``rlhf_branch`` is the
# paper's side branch (RLHF from the SFT checkpoint, §4.4), run before MOPD because it is MOPD's RLHF teacher; each
# stage starts from ``<stage>.init_from`` (default: the stage before it here), see ``input_stage``.
STAGE_PLAN: tuple[str, ...] = (
    "sft", "if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl", "swe_rl",
)
StageName = Literal["sft", "if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl",
                    "swe_rl"]


class RunSection(StrictSection):
    seed: int = 0
    until: StageName = Field(description="Last stage `recipe run` executes by default (stages after it are listed "
                                          "as not run, never silently skipped).")
    backend: Literal["local", "cluster"] = "local"
    torch_threads: int = Field(1, ge=1, description="torch intra-op threads for the local backend.")
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    fused_optimizer: bool = Field(False, description="AdamW's fused kernel instead of the per-tensor foreach one: the "
                                  "same update up to float rounding, faster on large models (recipe.train.optimizer).")
    state_save_every_s: Optional[float] = Field(
        None, ge=0, description="Write a stage's step state (its resume point) after the first step that ends this "
        "many seconds after the last save, instead of every `save_every` steps (recipe.train.state.SaveClock).")
    cpu_bf16: Literal["off", "on", "auto"] = Field(
        "off", description="bf16 autocast over fp32 master weights on the CPU, as on CUDA: auto = where the CPU has "
        "bf16 matrix units (AMX / AVX512-BF16; recipe.train.device).")
    train_micro_batch_size: Optional[int] = Field(
        None, ge=1, description="Rows a training forward/backward runs at once (NeMo-RL's policy.train_micro_batch_size):"
        " an update or SFT step accumulates the gradient over micro-batches, the same loss and gradient as one pass "
        "over the batch (every micro-batch is normalised by the whole batch's count); memory then grows with the "
        "micro-batch, not the batch. null: the whole batch in one pass (recipe.train.micro_batches).")
    logprob_batch_size: Optional[int] = Field(
        None, ge=1, description="Rows a no-grad log-prob pass (reference, teacher) runs at once (NeMo-RL's "
        "policy.logprob_batch_size); null: the whole batch in one pass.")


class TinyDomainSpec(StrictSection):
    train_items: int = Field(gt=0, description="Training prompts generated per domain.")
    val_items: int = Field(gt=0, description="Held-out validation prompts per domain (disjoint from training): "
                           "the report split.")
    selection_items: int = Field(0, ge=0, description="Held-out prompts per domain for choosing MOPD teachers (the "
                                 "selection split, disjoint from training and from the report split).")
    chat_filler_rate: float = Field(0.5, ge=0, le=1, description="Share of chat SFT references that open with a "
                                    "filler word (the flaw RLHF has to remove).")
    max_operand: int = Field(99, gt=1, description="Largest operand in tiny math problems.")
    if_words: list[str] = Field(default_factory=lambda: ["cat", "dog", "sun", "red", "box", "hat"])
    mcqa_options: int = Field(4, ge=2, le=6)
    mcqa_max_value: int = Field(99, ge=5, description="MCQA option values are distinct integers in [0, this].")
    rl_pool_fraction: float = Field(0.5, ge=0, le=1, description="Share of distinct training prompts reserved for "
                                    "RL (the rest are SFT prompts).")
    train_items_per_domain: dict[str, int] = Field(default_factory=dict, description="Per-domain train_items override.")
    val_items_per_domain: dict[str, int] = Field(default_factory=dict, description="Per-domain val_items override "
                                                 "(sandbox-graded domains keep small validation sets).")
    long_context_people: int = Field(6, ge=2, description="long_context: people (facts) per document, the most.")
    long_context_min_people: Optional[int] = Field(
        None, ge=1, description="long_context: the fewest people per document; each document draws its count "
        "uniformly from [this, long_context_people] (a range of difficulty, as RULER's needle tasks range from one "
        "key to many). Unset: every document has long_context_people. A one-person document asks a one-hop question.")
    long_context_filler: int = Field(100, ge=1, description="long_context: filler sentences per document.")
    long_context_sft_filler: Optional[int] = Field(
        None, ge=0, description="long_context: filler sentences of the document SFT trains on (the same facts and "
        "question, a shorter document: SFT teaches retrieval where it is cheap to learn, long-context RL and every "
        "evaluation meet the full document). Unset: SFT trains on the full document.")
    code_max_constant: int = Field(9, ge=2, description="code: largest constant k in a specification (8 families x "
                                   "(this - 1) distinct tasks).")
    code_tests: int = Field(5, ge=1, description="code: hidden unit tests per task.")
    swe_functions: int = Field(3, ge=1, le=8, description="swe: functions in the repository's file.")
    swe_max_constant: int = Field(9, ge=2, description="swe / swe_agentic: largest constant k of a repository's "
                                  "functions.")
    swe_drawn_inputs: bool = Field(False, description="swe / swe_agentic: the hidden tests' inputs are drawn per "
                                   "repository (distinct issues per function/bug kind grow from 57 to thousands) "
                                   "instead of each function's three fixed ones.")
    sandbox_time_limit_s: float = Field(2.0, gt=0, description="code/swe: CPU-time limit of one hidden-test run.")
    generators: dict[str, Literal["if_registry"]] = Field(
        default_factory=dict, description="Per-domain generator other than the domain's tiny one: "
        "instruction_following: if_registry composes IFEval's own instructions onto requests of our own "
        "(recipe.domains.if_registry_domain).")
    if_min_constraints: int = Field(1, ge=1, description="if_registry: fewest instructions a prompt carries.")
    if_max_constraints: int = Field(3, ge=1, description="if_registry: most instructions a prompt carries.")
    if_exclude_ids: list[str] = Field(default_factory=list, description="if_registry: IFEval instruction ids never "
                                      "drawn.")
    if_max_answer_words: int = Field(60, ge=5, description="if_registry: a draw whose built reference answer is "
                                     "longer is drawn again (answers must fit the rollout and validation caps).")

    @model_validator(mode="after")
    def _long_context_people_range(self):
        if self.long_context_min_people is not None and self.long_context_min_people > self.long_context_people:
            raise ValueError(f"long_context_min_people ({self.long_context_min_people}) > long_context_people "
                             f"({self.long_context_people})")
        return self

    @model_validator(mode="after")
    def _if_constraint_range(self):
        if self.if_min_constraints > self.if_max_constraints:
            raise ValueError(f"if_min_constraints ({self.if_min_constraints}) > if_max_constraints "
                             f"({self.if_max_constraints})")
        return self


class DomainsSection(StrictSection):
    names: list[str] = Field(description="Domains scored after every stage (validation.json columns).")
    generator: Literal["tiny", "released"] = Field(
        description="tiny: deterministic in-process toy-but-real tasks; released: NVIDIA's released data (recipe data).")
    tiny: Optional[TinyDomainSpec] = None
    released_records: Optional[str] = Field(None, description="generator: released on the local backend: the "
                                            "`recipe data curate --out` folder whose records/{train,validation}.jsonl "
                                            "the data phase splits by domain (recipe.data.released_splits).")


class EvaluationSection(StrictSection):
    max_new_tokens: int = Field(gt=0, description="Generation cap for validation.")
    max_new_tokens_per_domain: dict[str, PositiveInt] = Field(
        default_factory=dict,
        description="Caps for domains whose answers are longer than max_new_tokens (for an agentic domain: the cap "
                    "per turn). A cap below a domain's reference answers truncates every such answer to reward 0; "
                    "recipe.train.generation_caps checks this.")
    batch_size: int = Field(64, gt=0, description="Prompts per generation batch.")
    thinking: bool = Field(True, description="Validation renders its prompts in thinking mode (the cascade's); "
                           "false: instruct mode, for a run whose stages train in instruct mode.")
    decoding: Literal["greedy", "sample"] = "greedy"
    temperature: float = 1.0
    top_p: float = 1.0
    samples_per_prompt: int = Field(1, ge=1, description="avg@k: responses sampled per prompt (decoding: sample).")
    lanes: int = Field(1, ge=1, description="Worker processes of one torch thread each that validate domains at once "
                                            "(recipe.validation.lanes); 1 = in process. Same rows, same random "
                                            "numbers.")

    def cap_for(self, domain: str) -> int:
        """The validation generation cap of ``domain``."""
        return self.max_new_tokens_per_domain.get(domain, self.max_new_tokens)


class RecipeConfig(StrictSection):
    """A whole recipe: model, domains, every stage's hyperparameters, and the backends' settings."""

    profile: str
    run: RunSection
    model: ModelSection
    domains: DomainsSection
    evaluation: EvaluationSection
    sft: SFTConfig
    if_rl: RLStageConfig
    multi_domain_rl: RLStageConfig
    rlhf_branch: RLStageConfig
    mopd: MOPDConfig
    rlhf: RLStageConfig
    long_context_rl: RLStageConfig
    code_rl: RLStageConfig
    swe_rl: SWEConfig
    verify: VerifySection = Field(default_factory=VerifySection)
    data: DataSection = Field(default_factory=DataSection)
    hub: HubSection = Field(default_factory=HubSection)
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    benchmarks: BenchmarksSection = Field(default_factory=BenchmarksSection)
    olympiad: OlympiadSection = Field(default_factory=OlympiadSection)

    @property
    def stage_plan(self) -> tuple[str, ...]:
        return STAGE_PLAN

    def stage(self, name: str):
        if name not in STAGE_PLAN:
            raise KeyError(f"unknown stage {name!r}; the plan is {', '.join(STAGE_PLAN)}")
        return getattr(self, name)

    def input_stage(self, name: str) -> str | None:
        """The stage whose checkpoint ``name`` starts from: its ``init_from``, else the stage before it."""
        i = STAGE_PLAN.index(name)
        if i == 0:
            return None
        init = getattr(self.stage(name), "init_from", None)
        if init is None:
            return STAGE_PLAN[i - 1]
        if init not in STAGE_PLAN or STAGE_PLAN.index(init) >= i:
            raise ValueError(f"{name}.init_from: {init!r} must be a stage that runs before {name} "
                             f"(the plan is {', '.join(STAGE_PLAN)})")
        return init

    @field_validator("profile")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v:
            raise ValueError("profile must be a non-empty name")
        return v

    @model_validator(mode="after")
    def _capped_domains_exist(self) -> "RecipeConfig":
        for key, named in (("evaluation.max_new_tokens_per_domain", self.evaluation.max_new_tokens_per_domain),
                           ("sft.domain_fraction", self.sft.domain_fraction)):
            unknown = sorted(set(named) - set(self.domains.names))
            if unknown:
                raise ValueError(f"{key}: unknown domain(s) {', '.join(unknown)} "
                                 f"(domains.names: {', '.join(self.domains.names)})")
        return self
