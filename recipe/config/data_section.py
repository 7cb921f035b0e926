"""The ``data`` config section: released datasets (pinned), curation settings, per-stage prompt pools, splits.

Values live in ``profiles/<tiny|paper>/data.yaml``; paper values cite RECIPE.md §7 / the paper there.
Every field has a default so ``DataSection()`` is valid (the root config's ``data`` default); the
defaults are the small-scale (tiny) settings. Used by ``recipe.data`` (curation) and ``recipe data`` (CLI).
"""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import Field, model_validator

from recipe.config.benchmarks_section import BenchmarkSource
from recipe.config.strict_section import StrictSection


class ReleasedDataset(StrictSection):
    """One NVIDIA release we consume (RECIPE.md §7): Hub id, pinned revision, license and card row counts.
    Every config is read through ``datasets`` in streaming mode (no Arrow cache), see recipe/data/loaders.py."""
    repo_id: str = Field(description="Hugging Face dataset repo id, e.g. nvidia/Nemotron-Cascade-2-RL-data.")
    revision: Optional[str] = Field(None, description="Pinned commit sha; null = not pinned (curation records it).")
    license: str = Field(description="License id as on the dataset card (e.g. odc-by, other).")
    license_name: str = Field("", description="Human-readable license name for data cards.")
    format: Literal["nemo_gym", "messages"] = Field(description="Row format of every config.")
    configs: dict[str, int] = Field(default_factory=dict,
                                    description="Config name -> row count stated on the dataset card.")


class DedupSettings(StrictSection):
    exact: bool = Field(True, description="Drop rows whose normalized text (lowercase, collapsed whitespace) repeats.")
    near: bool = Field(True, description="Drop near-duplicates found with MinHash LSH (datasketch).")
    threshold: float = Field(0.8, gt=0, lt=1, description="Estimated Jaccard similarity above which rows are near-duplicates.")
    num_perm: int = Field(128, ge=16, le=512, description="MinHash permutations.")
    shingle_words: int = Field(5, ge=1, description="Word n-gram size of MinHash shingles.")
    scope: Literal["global", "per_source"] = Field(
        "global", description="global: within and across sources; per_source: only within each source.")


class DecontamSettings(StrictSection):
    ngram: int = Field(13, ge=3, description="Word n-gram length for overlap (13 = GPT-3 / common practice).")
    min_overlap: int = Field(1, ge=1, description="Drop a row sharing at least this many n-grams with the eval sets.")
    fields: Literal["prompt", "all"] = Field(
        "all", description="Row text checked: prompt turns only, or every message (incl. assistant answers).")
    benchmarks: Union[Literal["all"], list[str]] = Field(
        default_factory=list, description="Benchmarks decontaminated against, read through their evaluation suites "
        "(recipe.eval.decontam_items): suite names of the `benchmarks` section or names of `sources`; \"all\" = "
        "every suite of the `benchmarks` section and every entry of `sources`.")
    sources: dict[str, BenchmarkSource] = Field(
        default_factory=dict, description="Benchmarks evaluated outside the suite registry (IMO-Bench, GPQA): "
        "name -> where the file is (Hub or `benchmarks.mirror`).")
    eval_files: list[str] = Field(default_factory=list, description="Further evaluation files always decontaminated "
                                  "against: `BENCHMARK=PATH` (read by that benchmark's suite) or `PATH`.")


class LimitSettings(StrictSection):
    max_row_bytes: int = Field(4_000_000, gt=0, description="Rows longer than this (UTF-8 bytes) are quarantined.")
    max_messages: int = Field(2_000, gt=0, description="Rows with more messages are quarantined.")


class SplitSettings(StrictSection):
    validation_fraction: float = Field(0.05, ge=0, lt=1, description="Share of kept rows held out (by id hash).")
    seed: int = Field(0, description="Seed of the split hash and of pool sampling.")


class StagePool(StrictSection):
    """A stage's prompt pool: domain -> weight (normalised to sum 1) and an optional size."""
    weights: dict[str, float] = Field(description="Domain -> relative weight.")
    size: Optional[int] = Field(None, gt=0, description="Rows to draw; null = largest size the weights allow "
                                                        "without repeating rows.")
    note: str = Field("", description="Where the composition comes from.")

    @model_validator(mode="after")
    def _positive(self) -> "StagePool":
        if not self.weights or any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError(f"pool weights must be non-negative and sum > 0, got {self.weights}")
        return self


class DataSection(StrictSection):
    sft_data: ReleasedDataset = Field(default_factory=lambda: ReleasedDataset(
        repo_id="nvidia/Nemotron-Cascade-2-SFT-Data", license="other", format="messages"))
    rl_data: ReleasedDataset = Field(default_factory=lambda: ReleasedDataset(
        repo_id="nvidia/Nemotron-Cascade-2-RL-data", license="odc-by", format="nemo_gym"))
    backend: Literal["inprocess", "ray"] = Field(
        "inprocess", description="inprocess for small data; ray (Ray Data) for the paper's ~25M SFT rows.")
    ray_num_cpus: Optional[int] = Field(None, ge=1, description="CPUs for ray.init when no cluster is running.")
    batch_rows: int = Field(1024, gt=0, description="Rows per batch handed to the row-level logic.")
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    decontam: DecontamSettings = Field(default_factory=DecontamSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    split: SplitSettings = Field(default_factory=SplitSettings)
    pools: dict[str, StagePool] = Field(default_factory=dict, description="Stage name -> prompt pool.")
    report_max_listed: int = Field(10_000, gt=0, description="Quarantined/dropped entries listed in report.json "
                                                             "(all of them are always in the JSONL logs).")
