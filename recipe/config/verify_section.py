"""``verify`` config section: sandbox limits, verifier worker pool, Ray address, math timeout, pairwise judge.

Consumed by ``recipe.rewards`` (``verify_batch(..., workers=cfg.verify.workers, ray_address=cfg.verify.ray_address)``),
``recipe.sandbox`` (``cfg.verify.sandbox.limits()``) and the RLHF stage's judge
(``recipe.rewards.pairwise_judges.judge_from_section(cfg.verify.judge)``).
Paper values live in ``profiles/paper/verify.yaml`` with their sources; tiny values in ``profiles/tiny``.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from recipe.config.strict_section import StrictSection


class SandboxSection(StrictSection):
    time_limit_s: float = Field(6.0, gt=0, description="CPU-time limit per test run; RLIMIT_CPU = ceil(TL) + 1, wall kill at 2·TL + 1 (EVAL.md §8).")
    memory_mb: int = Field(1024, gt=0, description="Address-space limit (RLIMIT_AS) per run.")
    max_processes: int = Field(64, gt=0, description="RLIMIT_NPROC per run (each run has its own uid when the host process is root).")
    max_file_mb: int = Field(64, gt=0, description="RLIMIT_FSIZE per file.")
    max_open_files: int = Field(64, gt=3, description="RLIMIT_NOFILE.")
    workdir_quota_mb: int = Field(128, gt=0, description="Total size the private work dir may reach before the run is killed (output_limit).")
    stdout_limit_kb: int = Field(1024, gt=0, description="Captured stdout cap; more output kills the run (output_limit).")
    unsafe_no_isolation: bool = Field(False, description="Run without bubblewrap (trusted code only). Never for model output on a shared host.")

    def limits(self):
        from recipe.sandbox import Limits

        return Limits(time_limit_s=self.time_limit_s, memory_mb=self.memory_mb, max_processes=self.max_processes,
                      max_file_mb=self.max_file_mb, max_open_files=self.max_open_files,
                      workdir_quota_mb=self.workdir_quota_mb, stdout_limit_bytes=self.stdout_limit_kb << 10)


class JudgeSection(StrictSection):
    kind: Literal["deterministic_rubric", "openai"] = Field(
        "deterministic_rubric", description="deterministic_rubric: rule-based stand-in (tiny); openai: an OpenAI-compatible endpoint (vLLM) serving the GenRM.")
    base_url: Optional[str] = Field(None, description="Endpoint base, e.g. http://genrm:8000/v1 (kind=openai).")
    model: Optional[str] = Field(None, description="Served model name (kind=openai).")
    api_key_env: Optional[str] = Field(None, description="Name of the environment variable holding the API key (never the key itself).")
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(2, ge=0)
    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(2048, gt=0)
    both_orders: bool = Field(True, description="Judge (A,B) and (B,A); order-inconsistent preferences become ties.")

    @model_validator(mode="after")
    def _endpoint_given(self):
        if self.kind == "openai" and (not self.base_url or not self.model):
            raise ValueError("verify.judge.kind=openai needs verify.judge.base_url and verify.judge.model "
                             "(e.g. base_url: http://localhost:8000/v1, model: the served GenRM name)")
        return self


class VerifySection(StrictSection):
    workers: Optional[int] = Field(None, ge=1, description="Verifier worker processes; null = in process for small batches, a pool (all cores) for big ones.")
    pool_threshold: int = Field(4096, ge=1, description="Batch size from which verify_batch uses a local pool when workers is null.")
    ray_address: Optional[str] = Field(None, description="Run verifications as Ray tasks on this cluster ('auto' = the running one).")
    math_timeout_s: float = Field(5.0, gt=0, description="Own time limit around math-verify (EVAL.md §3: timeout_seconds=5).")
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    judge: JudgeSection = Field(default_factory=JudgeSection)
