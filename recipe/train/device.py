"""Where the local backend trains (``run.device``) and what a stage's manifest records about it.

Precision on CUDA: fp32 master weights with bf16 autocast, not pure bf16. AdamW's update at RL learning rates (the
paper's 2e-6 to 3e-6, App. B Tables 8-10; the small profile's 5e-6 and 1e-5) is ~1e-6 to 1e-5 of a weight, far
below bf16's resolution (8 mantissa bits: ~4e-3 relative),
so pure-bf16 weights would drop most updates unless stochastic rounding or a separate fp32 copy were added; at 135M
parameters the fp32 copy and its Adam moments cost ~2.2 GB, nothing on one GPU, and autocast still runs the matmuls
in bf16 on the tensor cores.

Precision on CPU: fp32 by default (``run.cpu_bf16: off``; the tiny profile, whose numbers stay comparable run to
run). ``run.cpu_bf16: on`` runs the same bf16 autocast over fp32 master weights on the CPU; ``auto`` turns it on where
the CPU has bf16 matrix units (Intel AMX or AVX512-BF16, which oneDNN uses: a 576 x 1536 linear layer at 64-128 rows
runs 4-5x faster than in fp32 on the 2-core development machines, 0.13 vs 0.57 ms), and leaves fp32 elsewhere
(without them bf16 is emulated, slower than fp32). The setting is process-wide (:func:`set_cpu_bf16`): the stage
runner and the comparison set it from the run's config before any forward pass.

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


_CPU_BF16 = False   # bf16 autocast on the CPU (set_cpu_bf16); off unless a run's config turns it on


def cpu_has_bf16_units() -> bool:
    """Whether this CPU has bf16 matrix units oneDNN uses (Intel AMX tiles or AVX512-BF16)."""
    cpu = getattr(torch._C, "_cpu", None)
    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        fn = getattr(cpu, probe, None)
        if fn is not None and fn():
            return True
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " amx_bf16" in flags or " avx512_bf16" in flags


def set_cpu_bf16(setting: str) -> bool:
    """``run.cpu_bf16`` (``off``, ``on`` or ``auto``: on where :func:`cpu_has_bf16_units`) for this process; returns
    whether CPU forward passes now run under bf16 autocast."""
    global _CPU_BF16
    if setting not in ("off", "on", "auto"):
        raise ValueError(f"run.cpu_bf16: {setting!r}, expected off, on or auto")
    _CPU_BF16 = setting == "on" or (setting == "auto" and cpu_has_bf16_units())
    return _CPU_BF16


def precision_name(device: torch.device) -> str:
    bf16 = device.type == "cuda" or (device.type == "cpu" and _CPU_BF16)
    return "float32 weights, bfloat16 autocast" if bf16 else "float32"


def autocast(device: torch.device):
    """bf16 autocast for forward passes on CUDA, and on the CPU where ``set_cpu_bf16`` turned it on (fp32 master
    weights, see the module docstring); otherwise nothing."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "cpu" and _CPU_BF16:
        return torch.autocast("cpu", dtype=torch.bfloat16)
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
