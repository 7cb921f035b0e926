"""Where the local backend trains (``run.device``) and what a stage's manifest records about it.

Precision on CUDA: fp32 master weights with bf16 autocast, not pure bf16. AdamW's update at RL learning rates (the
paper's 2e-6 to 3e-6, App. B Tables 8-10; the small profile's 5e-6 and 1e-5) is ~1e-6 to 1e-5 of a weight, far
below bf16's resolution (8 mantissa bits: ~4e-3 relative),
so pure-bf16 weights would drop most updates unless stochastic rounding or a separate fp32 copy were added; at 135M
parameters the fp32 copy and its Adam moments cost ~2.2 GB, nothing on one GPU, and autocast still runs the matmuls
in bf16 on the tensor cores. On CPU everything stays fp32 (CPU bf16 matmuls are not faster on the machines this runs
on, and fp32 keeps the smoke's numbers comparable with the tiny profile's).

:class:`StageMeter` measures a stage: device, dtype, peak memory (CUDA: the allocator's peak; CPU: the process's
peak resident set since the stage began, reset through ``/proc/self/clear_refs`` where Linux allows it) and tokens
per second over the training loop.
"""
from __future__ import annotations

import contextlib
import time
from pathlib import Path

import torch


def resolve_device(setting: str) -> torch.device:
    """``cpu``, ``cuda`` (an error when there is none) or ``auto`` (CUDA when present, else CPU)."""
    if setting == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("run.device: cuda, but torch sees no CUDA device (torch.cuda.is_available() is False); "
                           "use run.device=auto or cpu")
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(setting)


def precision_name(device: torch.device) -> str:
    return "float32 weights, bfloat16 autocast" if device.type == "cuda" else "float32"


def autocast(device: torch.device):
    """bf16 autocast for forward passes on CUDA (fp32 master weights, see the module docstring); nothing on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def model_device(model) -> torch.device:
    return next(model.parameters()).device


def _rss_peak_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource  # not Linux: the process's lifetime peak (ru_maxrss is KiB on Linux, bytes on macOS)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StageMeter:
    """Device, dtype, peak memory and tokens per second of one stage's training loop."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peak_scope = "process"
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
            self.peak_scope = "stage"
        else:
            try:  # "5": reset the peak resident set size (VmHWM) to the current one (Linux >= 4.0)
                Path("/proc/self/clear_refs").write_text("5")
                self.peak_scope = "stage"
            except OSError:
                pass
        self.t0 = time.perf_counter()

    def record(self, tokens: int, train_s: float | None = None) -> dict:
        seconds = train_s if train_s is not None else time.perf_counter() - self.t0
        if self.device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(self.device) / 2**20
            kind = "cuda max_memory_allocated"
        else:
            peak = _rss_peak_mb()
            kind = "resident set (VmHWM)"
        return {"device": str(self.device), "dtype": precision_name(self.device),
                "device_name": torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else "cpu",
                "torch_threads": torch.get_num_threads(),
                "peak_memory_mb": round(peak, 1) if peak is not None else None,
                "peak_memory_kind": f"{kind}, {self.peak_scope}",
                "tokens": int(tokens), "train_s": round(seconds, 3),
                "tokens_per_s": round(tokens / seconds, 1) if seconds > 0 else None}


def stage_tokens(rows: list[dict], generations_per_prompt: int | None) -> int:
    """Tokens a stage's loop processed, from its metrics rows: SFT's trained answer tokens (``tokens``); RL: the
    tokens it sampled (mean response length x responses sampled, refill rounds included)."""
    total = 0.0
    for r in rows:
        if "tokens" in r:
            total += r["tokens"]
        elif "response_tokens_mean" in r and generations_per_prompt:
            total += r["response_tokens_mean"] * r.get("sampled_groups", 0) * generations_per_prompt
    return int(total)
