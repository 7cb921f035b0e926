"""Per-stage cost of the small profile (SmolLM2-135M-Instruct): seconds per step, tokens per second and peak memory
of each stage's training loop, on this machine's CPU and on CUDA when present. Prints a table.

Run: ``.venv/bin/python benchmarks/bench_small.py [--model runs/models/smollm2-135m-instruct-q4_1] [--steps 2]
[--device auto|cpu|cuda] [--full] [--ops]``. Each stage runs ``--steps`` steps from the imported weights (not chained: a
speed measurement, not a cascade). On CPU the stages run at the ``@small-smoke`` shapes (2 prompts, 8-token
answers) unless ``--full``; on CUDA at the small profile's own shapes. The last columns extrapolate each stage to
the profile's full shape and step count from the measured cost per token (see docs/SMALL_PROFILE.md for how the
one-H200 estimate is derived). Numbers taken on a shared, loaded machine are not final figures.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import tempfile
import time
from pathlib import Path

import torch

from recipe.config import STAGE_PLAN, load_config
from recipe.domains import build_tiny_splits
from recipe.model.pretrained import load_pretrained
from recipe.runs import RunDir
from recipe.train.context import StageContext
from recipe.train.device import StageMeter, resolve_device, stage_tokens
from recipe.train.rl import train_rl
from recipe.train.sft import train_sft

PARAMS_135M = 134.5e6  # SmolLM2-135M's parameters (tied embeddings counted once)


def stage_config(cfg, stage: str):
    return cfg.swe_rl.agentless if stage == "swe_rl" else cfg.stage(stage)


def full_step_tokens(cfg, stage: str) -> float:
    """Tokens one step of the full profile processes: SFT sequences x length bound; RL responses x cap."""
    s = stage_config(cfg, stage)
    if stage == "sft":
        return s.global_batch * 300.0  # tiny-domain SFT rows are ~100-1,000 SmolLM2 tokens; 300 a typical mean
    return s.prompts_per_step * s.generations_per_prompt * s.max_response_tokens


def run_stage_steps(cfg, stage: str, model, tok, splits, steps: int, tmp: Path) -> dict:
    scfg = stage_config(cfg, stage).model_copy(update={"steps": steps, "save_every": 10_000})
    if stage != "sft":
        scfg = scfg.model_copy(update={"teacher_candidate_every": 0, "hard_prompt_filter_samples": None})
    device = resolve_device(cfg.run.device)
    model.to(device)
    ctx = StageContext(run=RunDir(tmp / stage), stage=stage, cfg=cfg, model=model, tokenizer=tok, splits=splits,
                       progress=False)
    meter = StageMeter(device)
    t0 = time.perf_counter()
    if stage == "sft":
        train_sft(ctx, scfg)
    else:
        teachers = ({d: copy.deepcopy(model).eval() for d in scfg.domains[:1]} if scfg.advantage_estimator == "opd"
                    else None)
        if teachers:
            teachers = {d: next(iter(teachers.values())) for d in scfg.domains}
        ref = copy.deepcopy(model).eval() if scfg.kl_coef > 0 else None
        train_rl(ctx, scfg, teachers=teachers, ref_model=ref)
    seconds = time.perf_counter() - t0
    rows = ctx.run.read_metrics(stage)
    rt = meter.record(stage_tokens(rows, getattr(scfg, "generations_per_prompt", None)), seconds)
    return {"stage": stage, "s_per_step": seconds / steps, **rt}


def budget(cfg) -> dict:
    """Upper bounds of the full small profile's work, counted from the config: sequential decode steps (every
    generation call runs its cap; refill rounds at their maximum), generated tokens, trained tokens and FLOPs
    (6N a trained token, 2N a generated or reference/teacher token; SFT rows at a 300-token mean)."""
    decode_steps = gen_tokens = train_tokens = fwd_only = 0.0
    ev = cfg.evaluation
    val_rows = {d: (ev.samples_per_prompt * cfg.domains.tiny.val_items_per_domain.get(d, cfg.domains.tiny.val_items))
                for d in cfg.domains.names}
    per_validation = 0.0
    for d, rows in val_rows.items():
        calls = -(-rows // (ev.batch_size * ev.samples_per_prompt))
        turns = cfg.swe_rl.agentic.max_turns if d == "swe_agentic" else 1
        per_validation += calls * turns * ev.cap_for(d)
    for stage in STAGE_PLAN:
        phases = [cfg.swe_rl.agentless, cfg.swe_rl.agentic] if stage == "swe_rl" else [cfg.stage(stage)]
        if stage == "sft":
            s = cfg.sft
            train_tokens += s.steps * s.global_batch * 300
            continue
        for s in phases:
            rounds = s.dynamic_filtering_max_rounds if s.dynamic_filtering else 1
            turns = s.max_turns if s.rollout == "agentic" else 1
            n = s.prompts_per_step * s.generations_per_prompt
            decode_steps += s.steps * rounds * turns * s.max_response_tokens
            gen = s.steps * rounds * n * turns * s.max_response_tokens
            gen_tokens += gen
            train_tokens += s.steps * n * turns * (s.max_response_tokens + 200)  # + a ~200-token prompt
            if s.kl_coef > 0 or s.advantage_estimator == "opd":
                fwd_only += s.steps * n * (s.max_response_tokens + 200)
            if s.hard_prompt_filter_samples:
                decode_steps += s.max_response_tokens
    validations = len(STAGE_PLAN) + 1 + 2  # every stage, the agentless phase, the selection-split candidates
    decode_steps += validations * per_validation
    ep = cfg.benchmarks.eval_phase
    decode_steps += sum(-(-n // ep.batch_size) for n in ep.real_suites.values()) * ep.max_tokens + per_validation
    flops = 6 * PARAMS_135M * train_tokens + 2 * PARAMS_135M * (gen_tokens + fwd_only)
    return {"decode_steps": decode_steps, "generated_tokens": gen_tokens, "trained_tokens": train_tokens,
            "flops": flops}


def print_estimate(cfg, step_latency_s: tuple[float, ...] = (0.015, 0.025, 0.04), tflops: float = 100.0) -> None:
    b = budget(cfg)
    print(f"full small profile, upper bounds: {b['decode_steps']:,.0f} sequential decode steps, "
          f"{b['generated_tokens'] / 1e6:.1f}M generated tokens, {b['trained_tokens'] / 1e6:.1f}M trained tokens, "
          f"{b['flops'] / 1e15:.1f} PFLOP")
    for lat in step_latency_s:
        t = b["decode_steps"] * lat + b["flops"] / (tflops * 1e12)
        print(f"  one H200 at {lat * 1e3:.0f} ms a decode step and {tflops:.0f} TFLOP/s sustained: "
              f"{t / 60:.0f} min (estimate; assumptions, not measurements)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="runs/models/smollm2-135m-instruct-q4_1")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--full", action="store_true", help="the profile's own shapes on CPU too (slow)")
    ap.add_argument("--stages", nargs="*", default=list(STAGE_PLAN))
    ap.add_argument("--estimate-only", action="store_true", help="print the one-H200 estimate and exit")
    ap.add_argument("--ops", action="store_true", help="after each stage, its 15 costliest operators over the steps "
                    "run (torch.profiler: CUDA time on a GPU, CPU time otherwise; docs/SPEED.md quotes them)")
    a = ap.parse_args()
    if a.estimate_only:
        print_estimate(load_config("small"))
        return
    device = resolve_device(a.device)
    overrides = [f"model.name={a.model}", f"run.device={device.type}"]
    smoke = device.type == "cpu" and not a.full
    cfg = load_config("small", (["@small-smoke"] if smoke else []) + overrides)
    full = load_config("small", overrides)
    torch.set_num_threads(cfg.run.torch_threads)
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    print(f"device {device} ({'@small-smoke shapes' if smoke else 'small profile shapes'}), {a.steps} steps a stage, "
          f"torch threads {torch.get_num_threads()}")
    head = (f"{'stage':<16}{'s/step':>9}{'tokens':>9}{'tok/s':>9}{'peak MB':>10}"
            f"{'full tok/step':>15}{'full steps':>11}{'full est. s':>13}")
    print(head)
    print("-" * len(head))
    total = 0.0
    with tempfile.TemporaryDirectory() as d:
        for stage in a.stages:
            model, tok = load_pretrained(cfg.model)
            activities = [torch.profiler.ProfilerActivity.CPU] + (
                [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else [])
            with (torch.profiler.profile(activities=activities) if a.ops else contextlib.nullcontext()) as prof:
                r = run_stage_steps(cfg, stage, model, tok, splits, a.steps, Path(d))
            del model
            per_tok = r["train_s"] / max(1, r["tokens"])
            fs = stage_config(full, stage)
            est = per_tok * full_step_tokens(full, stage) * (fs.steps or 0)
            total += est
            print(f"{stage:<16}{r['s_per_step']:>9.2f}{r['tokens']:>9}{r['tokens_per_s'] or 0:>9.1f}"
                  f"{r['peak_memory_mb'] or 0:>10.0f}{full_step_tokens(full, stage):>15.0f}{fs.steps or 0:>11}"
                  f"{est:>13.0f}")
            if a.ops:
                key = "device_time_total" if device.type == "cuda" else "cpu_time_total"
                print(prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=48))
    print(f"training loops at the full profile, extrapolated per token on this device: {total / 3600:.1f} h "
          f"(validation and the eval phase not included; a loaded machine inflates every figure)")
    print_estimate(full)


if __name__ == "__main__":
    main()
