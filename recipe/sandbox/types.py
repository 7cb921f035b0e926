"""Typed inputs and outputs of the sandbox: ``Limits`` (what a run may use) and ``Verdict`` (what happened)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["ok", "timeout", "memory", "runtime_error", "output_limit", "killed", "compile_error"]


@dataclass(frozen=True)
class Limits:
    """Per-run limits (EVAL.md §8). ``time_limit_s`` is the CPU-time limit the verdict is judged by;
    ``RLIMIT_CPU`` is set to TL + 1 and the whole run is killed at the wall limit (default 2·TL + 1)."""

    time_limit_s: float = 6.0  # LiveCodeBench 6 s/test
    memory_mb: int = 1024  # RLIMIT_AS; SandboxFusion 1 GB
    wall_limit_s: float | None = None  # default 2·TL + 1
    max_processes: int = 64  # RLIMIT_NPROC, per run (each run has its own uid when the host allows it)
    max_file_mb: int = 64  # RLIMIT_FSIZE
    max_open_files: int = 64  # RLIMIT_NOFILE
    workdir_quota_mb: int = 128  # total bytes the work dir may hold (watched; exceeded → output_limit)
    tmp_mb: int = 64  # size of the private /tmp tmpfs
    stdout_limit_bytes: int = 1 << 20  # captured stdout cap; beyond it the run is killed (output_limit)
    stderr_limit_bytes: int = 64 << 10
    stack_unlimited: bool = False  # IOI runs use `ulimit -s unlimited` (EVAL.md §6)

    def __post_init__(self) -> None:
        if self.time_limit_s <= 0 or self.memory_mb <= 0:
            raise ValueError(f"time_limit_s and memory_mb must be positive, got {self.time_limit_s}, {self.memory_mb}")

    @property
    def wall_s(self) -> float:
        return self.wall_limit_s if self.wall_limit_s else 2 * self.time_limit_s + 1


@dataclass
class Verdict:
    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float
    cpu_s: float
    isolation: dict[str, Any] = field(default_factory=dict)
    signal: int | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
