"""The ``benchmarks`` config section: where each evaluation suite's rows come from, the paper's reported value with
its settings and citation (written once, in the paper profile), and the eval phase at the end of ``recipe run``."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from recipe.config.strict_section import StrictSection


class BenchmarkSource(StrictSection):
    repo_id: str
    revision: str = Field(description="A 40-hex commit pins; a branch name is recorded as unpinned.")
    file: str = Field(description="Path of the rows file inside the Hub repo.")
    repo_type: str = "dataset"
    mirror_file: str | None = Field(None, description="Path of the same file inside a local mirror folder.")
    format: str | None = Field(None, description="jsonl | csv | parquet (default: from the suffix; .txt = jsonl).")

    @property
    def pinned(self) -> bool:
        return len(self.revision) == 40 and all(c in "0123456789abcdef" for c in self.revision)


class PaperResult(StrictSection):
    """A value the paper reports, with the settings that produced it (EVAL.md §2) and where it is stated."""
    value: float
    metric: str
    k: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    thinking: bool | None = None
    judge: str | None = None
    citation: str


class BenchmarkEntry(StrictSection):
    source: BenchmarkSource | None = None
    baselines: dict[str, BenchmarkSource] = Field(
        default_factory=dict, description="Baseline answers of a pairwise-judged benchmark, per category.")
    paper: PaperResult | None = None


class EvalPhaseSection(StrictSection):
    """What ``recipe run`` evaluates after the last stage: the tiny suites on the run's validation rows, and a small
    slice of real benchmarks (first ``limit`` rows) read from ``mirror`` or the Hub, else shown as unavailable."""
    enabled: bool = True
    tiny_suites: list[str] = Field(default_factory=list, description="Empty = tiny_<domain> for every run domain.")
    tiny_limit: int | None = Field(None, gt=0, description="First N validation rows per tiny suite (None = all).")
    real_suites: dict[str, int] = Field(default_factory=dict, description="suite -> number of rows of the slice")
    k: int = Field(1, ge=1)
    max_tokens: int = Field(32, gt=0, description="Generation cap of the real slices; a tiny suite gets its "
                            "domain's validation cap (evaluation.cap_for).")
    temperature: float = 1.0
    top_p: float = 1.0
    thinking: bool = True
    batch_size: int = Field(64, gt=0)


class CompareToStartSection(StrictSection):
    """``recipe compare-to-start --rows``: the start model and several checkpoints of a run on IFEval / IFBench (all
    four IFEval metrics and the card's mean, decoded as ``if_decoding``) and on the tiny suites (eval phase sampling),
    one row per suite x metric x model with its CI, n and the paired delta against the start model in instruct mode."""
    if_suites: dict[str, int] = Field(default_factory=dict, description="IF suite -> rows (first N of its file).")
    if_decoding: Literal["greedy", "sample"] = Field("greedy", description="greedy: temperature 0, k 1 (the "
                                                     "model card's IFEval setting); sample: the eval phase's "
                                                     "temperature, top-p and k.")
    if_max_tokens: int = Field(1280, gt=0, description="New tokens of an IF answer (the thinking included).")
    stages: list[str] = Field(default_factory=list, description="Checkpoints scored besides the run's last finished "
                              "stage (a stage not finished is listed as unavailable).")
    start_thinking: bool = Field(False, description="Also score the start model in the run's thinking mode.")


class ServingSection(StrictSection):
    """How a paper-scale eval job serves the model: vLLM from a pinned container with the model card's flags."""
    image: str = Field("vllm/vllm-openai:v0.17.1", description="vLLM container (pin a digest: image@sha256:...).")
    flags: list[str] = Field(default_factory=list, description="vllm serve flags (model card).")
    tensor_parallel: int = Field(8, ge=1)
    port: int = 8000
    health_timeout_s: int = Field(3600, gt=0)
    nodes: int = 1
    gpus_per_node: int = 8
    time: str = "12:00:00"
    partition: str | None = None
    account: str | None = None
    concurrency: int = Field(64, ge=1, description="Requests in flight from recipe eval.")


class BenchmarksSection(StrictSection):
    mirror: str | None = Field(None, description="Local folder holding the benchmark files (mirror_file paths); "
                                                 "relative paths are resolved from the project root.")
    allow_hub: bool = True
    suites: dict[str, BenchmarkEntry] = Field(default_factory=dict)
    eval_phase: EvalPhaseSection = Field(default_factory=EvalPhaseSection)
    compare_to_start: CompareToStartSection = Field(default_factory=CompareToStartSection)
    serving: ServingSection = Field(default_factory=ServingSection)
