"""``cluster:`` section: cluster-only facts for running the cascade with NeMo-RL on Slurm.

Hyperparameters are NOT here: they live in the stage sections (``sft``, ``if_rl``, …) and are mapped to NeMo-RL
keys by ``recipe.cluster.keymap``. This section holds what only a cluster run needs: the pinned container
(release tag, lock file with the digest), Slurm account/partition/time limit, mounts, shared-filesystem roots,
per-stage nodes × GPUs and parallelism (shapes from NVIDIA's configs, NEMO_RL.md §3.1/§5/§8), resume policy
(NEMO_RL.md §7: NeMo-RL always auto-resumes, so the policy is made explicit here) and the
``checkpoint_must_save_by`` safety margin before the Slurm time limit.
"""
from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from recipe.config.strict_section import StrictSection

_TIME_RE = re.compile(r"^(?:(\d+)-)?(\d{1,3}):(\d{2}):(\d{2})$")


def parse_slurm_time(text: str) -> int:
    """Seconds in a Slurm ``[D-]HH:MM:SS`` limit; raises ValueError naming the format."""
    m = _TIME_RE.match(text.strip())
    if not m:
        raise ValueError(f"time limit {text!r}: expected [D-]HH:MM:SS, e.g. 04:00:00 or 1-00:00:00")
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    if mi > 59 or s > 59:
        raise ValueError(f"time limit {text!r}: minutes and seconds must be < 60")
    return ((d * 24 + h) * 60 + mi) * 60 + s


class ContainerSpec(StrictSection):
    image: str = Field("nvcr.io/nvidia/nemo-rl", description="Registry repository of the NeMo-RL release image.")
    tag: str = Field("v0.7.0", description="Release tag (NEMO_RL.md §1.1: pin one release for every stage).")
    lock_file: str = Field("containers/nemo-rl.lock.json",
                           description="Lock with the image digest, git tag/commit, submodule SHAs and versions "
                                       "(relative to the project root). Written by `recipe cluster lock`.")
    sqsh: Optional[str] = Field(None, description="Path of an enroot .sqsh built from the derived image "
                                                  "(containers/README.md); used instead of the registry image.")


class Parallelism(StrictSection):
    """Megatron policy layout and vLLM generation layout (keys of NeMo-RL's megatron_cfg / vllm_cfg)."""

    tensor: int = Field(1, ge=1)
    pipeline: int = Field(1, ge=1)
    context: int = Field(1, ge=1)
    expert: int = Field(1, ge=1)
    sequence_parallel: bool = False
    vllm_tensor: int = Field(1, ge=1, description="vLLM tensor-parallel size.")


class TeacherResources(StrictSection):
    """MOPD: non-colocated Megatron teachers (on_policy_distillation.non_colocated_teachers.default_teacher_cfg)."""

    nodes_per_teacher: int = Field(1, ge=1)
    tensor: int = Field(1, ge=1)
    pipeline: int = Field(1, ge=1)
    context: int = Field(1, ge=1)
    expert: int = Field(1, ge=1)
    micro_batch_size: int = Field(1, ge=1)


class StageResources(StrictSection):
    nodes: int = Field(ge=1, description="Slurm nodes for policy + generation. MOPD adds teachers.nodes_per_teacher "
                                         "nodes per distinct teacher checkpoint on top (NeMo-RL carves them out).")
    gpus_per_node: int = Field(8, ge=1)
    time_limit: Optional[str] = Field(None, description="Slurm --time for this stage (default: cluster.time_limit).")
    parallelism: Parallelism = Field(default_factory=Parallelism)
    generation_nodes: Optional[int] = Field(
        None, ge=1, description="Dedicated vLLM nodes (non-colocated generation); None = colocated with training.")
    teachers: Optional[TeacherResources] = Field(None, description="MOPD only: teacher worker shape.")
    step_time_s: Optional[float] = Field(None, gt=0, description="Estimated seconds per training step: segments = "
                                         "steps x step time over the usable part of a segment (cluster.segment_startup_s).")
    source: str = Field("", description="Which NVIDIA config this shape comes from (shown in RUN_AT_SCALE.md).")

    @field_validator("time_limit")
    @classmethod
    def _time(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            parse_slurm_time(v)
        return v


class JudgeSpec(StrictSection):
    """A judge model served by NeMo-Gym on its own GPU nodes for the stages that need it (RECIPE.md §4)."""

    model: Optional[str] = Field(None, description="HF id of the judge; rendering refuses a stage that needs it while "
                                                   "unset (the judge never defaults to the policy).")
    nodes: int = Field(1, ge=1, description="Nodes added to the job's sbatch for this judge (env.nemo_gym.num_gpu_nodes).")
    tensor: int = Field(8, ge=1, description="vLLM tensor-parallel size of one judge replica.")
    data_parallel: int = Field(1, ge=1, description="vLLM data-parallel replicas.")
    reasoning: bool = Field(False, description="The judge emits reasoning (Gym uses_reasoning_parser).")
    reasoning_parser: Optional[str] = Field(
        None, description="vLLM --reasoning-parser the judge is served with (vllm_serve_kwargs.reasoning_parser); "
                          "with reasoning: true Gym expects the reasoning split off by vLLM.")
    max_model_len: Optional[int] = Field(None, ge=1, description="vLLM max_model_len of the judge (the start-up "
                                         "check refuses it unset: vLLM's default is the model's full context).")
    gpu_memory_utilization: Optional[float] = Field(None, gt=0, le=1, description="vLLM gpu_memory_utilization of "
                                                    "the judge (refused unset; vLLM's default is 0.9).")
    source: str = Field("", description="Where the model choice comes from.")

    @model_validator(mode="after")
    def _fits(self):
        if self.tensor * self.data_parallel > self.nodes * 8:
            raise ValueError(f"judge {self.model}: TP{self.tensor} x DP{self.data_parallel} GPUs do not fit on "
                             f"{self.nodes} node(s) of 8 GPUs")
        return self


class ClusterSection(StrictSection):
    nemo_rl_release: str = Field("v0.7.0", description="NeMo-RL git tag the configs are rendered for.")
    container: ContainerSpec = Field(default_factory=ContainerSpec)
    account: Optional[str] = Field(None, description="Slurm --account; rendering refuses while unset.")
    partition: Optional[str] = Field(None, description="Slurm --partition; rendering refuses while unset.")
    time_limit: str = Field("04:00:00", description="Default Slurm --time per job segment.")
    checkpoint_must_save_by_margin_min: int = Field(
        20, ge=1, description="NeMo-RL checkpoint_must_save_by = time limit minus this many minutes "
                              "(Nano-3 RL: 00:03:40:00 under a 4 h limit = 20 min).")
    segment_startup_s: float = Field(0, ge=0, description="Seconds a segment spends starting (Ray, vLLM, Gym "
                                     "servers, model load) before it trains; used for the segment count.")
    mounts: list[str] = Field(default_factory=list, description="Extra container mounts SRC:DST (pyxis syntax). "
                                                               "The run root and the code snapshot are added.")
    data_root: Optional[str] = Field(None, description="Shared directory of the JSONL files per stage: NeMo-Gym rows "
                                                       "for RL stages, OpenAI-format chat rows for SFT "
                                                       "(<data_root>/<stage>/{train,validation}.jsonl; default: <run>/nemo_rl_data).")
    hf_home: Optional[str] = Field(None, description="HF_HOME on the shared filesystem, seen by every node (model "
                                                     "weights, judge downloads, NeMo-RL's HF->Megatron cache under "
                                                     "<hf_home>/nemo_rl); rendering refuses while unset.")
    resume: str = Field("auto", description="auto: continue from the newest step_N of this stage; never: start in a "
                                            "fresh checkpoint dir; from_step=N: continue from step N (newer steps are "
                                            "moved aside, never deleted).")
    branches: dict[str, str] = Field(
        default_factory=dict, description="MOPD teacher slots 'branch:<name>': name -> converted HF checkpoint of a side "
                                          "branch run (e.g. rlhf_from_sft: the RLHF recipe applied to the SFT checkpoint).")
    judges: dict[str, JudgeSpec] = Field(default_factory=dict, description="Judge models by role: genrm (RLHF), "
                                                                    "long_context_judge.")
    chat_template: Literal["released", "recipe"] = Field(
        "recipe", description="SFT chat template: 'released' = the released model's own, from its pinned download "
                              "(paper); 'recipe' = the hand-written template of recipe.model.chat_template (tiny).")
    swe_container_formatter: Optional[str] = Field(
        None, description="Gym swe_agents container_formatter: image pattern of the SWE task sandboxes "
                          "(mandatory for agentic SWE).")
    stages: dict[str, StageResources] = Field(default_factory=dict, description="Per-stage resources (keys: the stage plan; "
                                                                               "swe_rl_agentless / swe_rl_agentic for SWE).")

    @field_validator("resume")
    @classmethod
    def _resume(cls, v: str) -> str:
        if not re.fullmatch(r"auto|never|from_step=\d+", v):
            raise ValueError(f"resume {v!r}: expected auto, never or from_step=N (e.g. from_step=40)")
        return v

    @field_validator("time_limit")
    @classmethod
    def _time(cls, v: str) -> str:
        parse_slurm_time(v)
        return v

    @model_validator(mode="after")
    def _margin(self):
        for name, res in {"cluster": None, **self.stages}.items():
            limit = parse_slurm_time((res.time_limit if res else None) or self.time_limit)
            if self.checkpoint_must_save_by_margin_min * 60 >= limit:
                raise ValueError(f"{name}: checkpoint_must_save_by_margin_min ({self.checkpoint_must_save_by_margin_min}) "
                                 f"must be shorter than the time limit ({limit // 60} min)")
        return self

    @property
    def resume_mode(self) -> Literal["auto", "never", "from_step"]:
        return "from_step" if self.resume.startswith("from_step=") else self.resume  # type: ignore[return-value]

    @property
    def resume_step(self) -> Optional[int]:
        return int(self.resume.split("=", 1)[1]) if self.resume.startswith("from_step=") else None

    def resources(self, stage: str) -> StageResources:
        if stage not in self.stages:
            raise KeyError(f"cluster.stages has no entry for {stage!r}; add one to the profile's cluster.yaml "
                           f"(known: {', '.join(self.stages) or 'none'})")
        return self.stages[stage]
