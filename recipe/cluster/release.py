"""The pinned NeMo-RL release: entry points, base configs, and where its YAML files live.

One release for every stage (NEMO_RL.md §1.1 recommendation): ``nvcr.io/nvidia/nemo-rl:v0.7.0``, git tag
``v0.7.0`` (commit ``81aa43dd…``), the first release with multi-teacher MOPD (``adv_estimator: opd``). The
image digest and submodule SHAs are not typed here: they live in ``containers/nemo-rl.lock.json`` and are
resolved by ``recipe cluster lock`` (see ``recipe.cluster.lock``).

Entry points and base configs per stage kind follow NEMO_RL.md §2:

* SFT: ``examples/run_sft.py`` on ``examples/configs/sft.yaml`` (Megatron path: 256K packed sequences are
  beyond DTensor/Automodel, NEMO_RL.md §2).
* every GRPO stage and MOPD: ``examples/nemo_gym/run_grpo_nemo_gym.py`` on
  ``examples/nemo_gym/grpo_nanov3.yaml`` (the official Nano-3 Gym config; MOPD adds ``adv_estimator: opd``
  and ``on_policy_distillation`` keys, whose schema ships in v0.7.0's ``grpo_math_1B.yaml`` lineage).

``ReleaseTree`` finds a release file by its original repository path, either in a NeMo-RL checkout
(``/opt/nemo-rl`` inside the container, or a clone) or in a flattened copy where ``/`` became ``__`` (the
layout of the test fixtures). Inside the container the rendered YAML inherits from the release file by
absolute path, so no release file is ever copied into this project.
"""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recipe.cluster.nrl_yaml import load_with_defaults

NEMO_RL_REPO = "https://github.com/NVIDIA-NeMo/RL"
RELEASE_TAG = "v0.7.0"
RELEASE_COMMIT = "81aa43dda4765b0429cf31dab44441e4e4383911"
IMAGE_REPOSITORY = "nvcr.io/nvidia/nemo-rl"
CONTAINER_SOURCE_DIR = "/opt/nemo-rl"  # where the image bakes the NeMo-RL source (NEMO_RL.md §1)
CONTAINER_FINGERPRINT_FILE = "/opt/nemo_rl_container_fingerprint"

StageKind = Literal["sft", "grpo", "mopd"]

ENTRY_POINTS: dict[StageKind, str] = {
    "sft": "examples/run_sft.py",
    "grpo": "examples/nemo_gym/run_grpo_nemo_gym.py",
    "mopd": "examples/nemo_gym/run_grpo_nemo_gym.py",
}
BASE_CONFIGS: dict[StageKind, str] = {
    "sft": "examples/configs/sft.yaml",
    "grpo": "examples/nemo_gym/grpo_nanov3.yaml",
    "mopd": "examples/nemo_gym/grpo_nanov3.yaml",
}
# Megatron -> HF converter shipped in the release (NEMO_RL.md §7); needs the mcore extra.
MEGATRON_TO_HF = "examples/converters/convert_megatron_to_hf.py"

# Every example config of the release that the key-existence check uses (paths inside the NeMo-RL v0.7.0 tree;
# the tests use genuine copies of these files).
RELEASE_CONFIGS = (
    "examples/configs/sft.yaml",
    "examples/configs/grpo_math_1B.yaml",
    "examples/configs/distillation_math.yaml",
    "examples/configs/evals/eval.yaml",
    "examples/configs/evals/math_eval.yaml",
    "examples/nemo_gym/grpo_nanov3.yaml",
    "examples/configs/recipes/llm/mopd-qwen3-1.7b-3n8g-megatron-pack.yaml",
    "examples/configs/recipes/llm/sft-nanov3-30BA3B-2n8g-fsdp2.yaml",
    "examples/configs/recipes/llm/grpo-nanov3-30BA3B-2n8g-megatron-pack-cp.yaml",
)

# v0.7.0 ``on_policy_distillation`` pydantic schema (extra="allow"), as listed in the fixtures README.
OPD_SCHEMA_KEYS = frozenset({
    "on_policy_distillation.enabled",
    "on_policy_distillation.teacher_model_by_agent_name",
    "on_policy_distillation.default_teacher_alias",
    "on_policy_distillation.strict_agent_name_match",
    "on_policy_distillation.deduplicate_shared_teacher_checkpoints",
    "on_policy_distillation.non_colocated_teachers.enabled",
    "on_policy_distillation.non_colocated_teachers.teacher_overrides",
    *(f"on_policy_distillation.non_colocated_teachers.default_teacher_cfg.{k}" for k in (
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
        "expert_model_parallel_size", "num_nodes", "gpus_per_node", "precision", "micro_batch_size",
        "megatron_cfg_overrides")),
})


def stage_kind(stage: str, advantage_estimator: str | None = None) -> StageKind:
    if stage == "sft":
        return "sft"
    return "mopd" if advantage_estimator == "opd" else "grpo"


@dataclass(frozen=True)
class ReleaseTree:
    """The release's files, by original repository path, in a checkout or a flattened (``a__b.yaml``) copy."""

    root: Path
    flattened: bool = False

    @classmethod
    def find(cls, explicit: Path | str | None = None) -> "ReleaseTree | None":
        """``explicit`` or ``$RECIPE_NEMO_RL_DIR`` or ``/opt/nemo-rl``; flattened layout auto-detected."""
        for cand in (explicit, os.environ.get("RECIPE_NEMO_RL_DIR"), CONTAINER_SOURCE_DIR):
            if not cand:
                continue
            root = Path(cand)
            if (root / "examples" / "configs" / "sft.yaml").is_file():
                return cls(root, flattened=False)
            if (root / "examples__configs__sft.yaml").is_file():
                return cls(root, flattened=True)
            if explicit is not None and cand == explicit:
                raise FileNotFoundError(
                    f"{root} is neither a NeMo-RL checkout (examples/configs/sft.yaml) nor a flattened copy "
                    f"(examples__configs__sft.yaml); clone {NEMO_RL_REPO} at {RELEASE_TAG} and pass its path")
        return None

    def path(self, original: str) -> Path:
        original = posixpath.normpath(original.lstrip("/"))
        return self.root / (original.replace("/", "__") if self.flattened else original)

    def original_path(self, file: Path) -> str:
        """Inverse of :meth:`path` for a file inside the tree."""
        rel = Path(file).resolve().relative_to(self.root.resolve()).as_posix()
        return rel.replace("__", "/") if self.flattened else rel

    def defaults_resolver(self, container_root: str = CONTAINER_SOURCE_DIR):
        """A ``load_with_defaults`` path resolver that maps release paths (relative or under the container's
        ``/opt/nemo-rl``) into this tree."""
        prefix = container_root.rstrip("/") + "/"

        def _resolve(current: Path, ref: str) -> Path:
            if ref.startswith(prefix):
                return self.path(ref[len(prefix):])
            if ref.startswith("/"):
                return Path(ref)
            try:
                cur_orig = self.original_path(current)
            except ValueError:  # a file outside the tree (our rendered YAML) referring relatively
                return current.parent / ref
            return self.path(posixpath.join(posixpath.dirname(cur_orig), ref))

        return _resolve

    def load(self, original: str) -> dict:
        return load_with_defaults(self.path(original), resolve_path=self.defaults_resolver())

    def available_configs(self) -> list[str]:
        return [p for p in RELEASE_CONFIGS if self.path(p).is_file()]
