"""``hub`` config section: what `recipe hub download` fetches and how `recipe hub publish` pushes.

Repo ids, licenses and data configs come from RECIPE.md §1 and §7 (the released model card and the two
data cards). Revisions: a 40-hex commit pins exactly; a branch name (``main``) is accepted but is not a
pin -- `recipe hub download` then records the commit it resolved to in its manifest and warns, so the
value can be pinned afterwards (``hub.released_model.revision=<sha>``). For the two datasets the
revision is ``null`` here: the pin lives once, in the ``data`` section (``data.sft_data.revision``,
``data.rl_data.revision``, used by data curation too); see ``recipe.hub.download.configured_revision``.
The model's commit could not be looked up from the machine this was written on (no Hub access), so
the profiles say ``main`` for it.

Unsafe files (pickle weights, repository code) are never downloaded unless the user opts in
(`recipe hub download --allow-unsafe-files`); see ``recipe/hub/safe_load.py``.
"""
from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, model_validator

from recipe.config.strict_section import StrictSection

ArtifactName = Literal["released_model", "sft_data", "rl_data"]
ARTIFACT_CLI_NAMES: dict[str, str] = {"released-model": "released_model", "sft-data": "sft_data",
                                      "rl-data": "rl_data"}
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


class HubArtifact(StrictSection):
    """One released repository and the parts of it we may fetch."""

    repo_id: str = Field(description="Hub repo id, ORG/NAME.", pattern=r"^[\w.-]+/[\w.-]+$")
    repo_type: Literal["model", "dataset"]
    revision: Optional[str] = Field(
        None, description="Branch, tag or 40-hex commit downloaded by default (see module docstring). null for a "
                          "dataset: use the pin of the same repo in the `data` section (one place per value).")
    revision_verified: bool = Field(
        False, description="True only once `revision` was checked against the Hub (a download resolved it). A commit "
                           "taken from a public record and not checked stays False and is reported as unverified.")
    revision_source: str = Field("", description="Where the pinned revision comes from.")
    license: str = Field(description="License of the release as its card states it (RECIPE.md §1/§7).")
    always: list[str] = Field(default_factory=lambda: ["README.md"],
                              description="allow_patterns fetched whatever subsets are chosen (cards, configs).")
    subsets: dict[str, list[str]] = Field(
        description="Subset name -> allow_patterns. For datasets a subset is a data config (files <config>/*).")
    default_subsets: Optional[list[str]] = Field(
        None, description="Subsets fetched when --subset is not given; null means all of them.")

    @property
    def pinned(self) -> bool:
        return bool(self.revision and _SHA_RE.match(self.revision))

    @model_validator(mode="after")
    def _defaults_exist(self) -> "HubArtifact":
        unknown = [s for s in (self.default_subsets or []) if s not in self.subsets]
        if unknown:
            raise ValueError(f"default_subsets {unknown} are not in subsets {sorted(self.subsets)}")
        return self


class HubPublish(StrictSection):
    """Defaults of `recipe hub publish` (DESIGN.md §7: one repo per run, one branch per stage).

    The base model named in a card comes from the run's own config (``model.name`` when
    ``model.source: pretrained``), never from here."""

    private: bool = Field(True, description="Create new repos private (--private/--public overrides).")
    license: str = Field("other", description="License written into published model cards.")
    dataset_branch: str = Field("main", description="Branch curated datasets are pushed to.")


def _default_artifacts() -> dict:
    return {
        "released_model": HubArtifact(
            repo_id="nvidia/Nemotron-Cascade-2-30B-A3B", repo_type="model", revision="main",
            license="NVIDIA Open Model License",
            always=["README.md", "config.json", "generation_config.json"],
            subsets={"config": ["*.json", "*.jinja", "tokenizer*"], "weights": ["*.safetensors",
                                                                               "*.safetensors.index.json"]},
            default_subsets=["config"]),
        "sft_data": HubArtifact(
            repo_id="nvidia/Nemotron-Cascade-2-SFT-Data", repo_type="dataset", revision=None,
            license="NVIDIA Open Model License",
            subsets={c: [f"{c}/*"] for c in ("math", "science", "chat", "instruction_following", "safety",
                                             "conversational_agent", "swe", "terminal_agent")},
            default_subsets=["safety"]),
        "rl_data": HubArtifact(
            repo_id="nvidia/Nemotron-Cascade-2-RL-data", repo_type="dataset", revision=None,
            license="ODC-By-1.0",
            subsets={c: [f"{c}/*"] for c in ("IF-RL", "multi-domain-RL", "MOPD", "SWE-RL")},
            default_subsets=None),
    }


class HubSection(StrictSection):
    """Released artifacts to download and publishing defaults."""

    released_model: HubArtifact = Field(default_factory=lambda: _default_artifacts()["released_model"])
    sft_data: HubArtifact = Field(default_factory=lambda: _default_artifacts()["sft_data"])
    rl_data: HubArtifact = Field(default_factory=lambda: _default_artifacts()["rl_data"])
    download_dir: str = Field("downloads", description="Root of downloads: <download_dir>/<ORG>/<NAME>/ "
                                                       "(relative paths are relative to the working directory).")
    max_workers: int = Field(4, ge=1, description="Parallel file downloads (snapshot_download max_workers).")
    publish: HubPublish = Field(default_factory=HubPublish)

    def artifact(self, name: str) -> HubArtifact:
        key = ARTIFACT_CLI_NAMES.get(name, name)
        if key not in ("released_model", "sft_data", "rl_data"):
            raise KeyError(f"unknown artifact {name!r}: choose one of {', '.join(ARTIFACT_CLI_NAMES)}")
        return getattr(self, key)
