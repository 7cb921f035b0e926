"""Generation with the lean decode step vs Hugging Face's cached forward, same process, alternated.

    .venv/bin/python benchmarks/bench_decode.py [--profile tiny|small] [--checkpoint DIR] [--device auto]
                                                [--threads 2] [--repeats 6] [--ops]

For three batch shapes of the profile (IF-RL's prompts x generations at its cap, multi-domain RL's tool prompts x
generations, one validation batch of math prompts x samples at the evaluation cap) it times
``generate(..., lean_decode=True)`` and ``lean_decode=False`` on the same prompts and seed, alternating which runs
first, and prints the medians, the decode steps run, milliseconds a step and the ratio. Both paths sample the same
rows (tests/test_rollout.py, tests/test_llama_path.py), so the work is identical up to float rounding.

- ``--profile tiny`` (default): the tiny model of ``--checkpoint`` (default runs/tiny-seed0/01_sft/checkpoint);
- ``--profile small``: SmolLM2 from the small profile's ``model.name`` (``recipe model import``), on ``--device``
  (auto: CUDA when present, bf16 autocast as the trainers run it);
- ``--ops``: after the table, the 15 most expensive operators of one lean IF-RL batch (``torch.profiler``; CUDA
  time on a GPU, CPU time otherwise).
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import torch


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="tiny", choices=["tiny", "small"])
    ap.add_argument("--checkpoint", default=None, help="tiny: a checkpoint folder; small: default model.name")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--ops", action="store_true", help="profile one lean IF-RL batch and print the top operators")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, pool
    from recipe.model import load_checkpoint
    from recipe.model.pretrained import load_pretrained
    from recipe.train.device import resolve_device
    from recipe.train.rollout import generate, render_prompt

    cfg = load_config(a.profile)
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    if a.profile == "small":
        section = cfg.model.model_copy(update={"name": a.checkpoint}) if a.checkpoint else cfg.model
        model, tok = load_pretrained(section)
    else:
        model, tok = load_checkpoint(a.checkpoint or "runs/tiny-seed0/01_sft/checkpoint")
    device = resolve_device(a.device)
    model.to(device).eval()
    rng = random.Random(0)
    ev = cfg.evaluation
    shapes = [("instruction_following", cfg.if_rl.prompts_per_step, cfg.if_rl.generations_per_prompt,
               cfg.if_rl.max_response_tokens),
              ("tool_call", cfg.multi_domain_rl.prompts_per_step, cfg.multi_domain_rl.generations_per_prompt,
               cfg.multi_domain_rl.max_response_tokens),
              ("math", ev.batch_size, ev.samples_per_prompt, ev.cap_for("math"))]

    def prompts_for(dom: str, n: int, group: int) -> list[str]:
        records = pool(splits[dom]["train"], "rl")
        return [render_prompt(tok, r, True) for r in rng.sample(records, min(n, len(records))) for _ in range(group)]

    print(f"{a.profile} profile on {device} ({a.threads} threads), median of {a.repeats}")
    print(f"{'batch':<42} {'HF decode':>10} {'lean':>10} {'steps':>6} {'HF ms/step':>11} {'lean ms/step':>13}"
          f" {'ratio':>7}")
    for dom, n, group, cap in shapes:
        times: dict[bool, list[float]] = {True: [], False: []}
        steps: dict[bool, list[int]] = {True: [], False: []}
        for rep in range(a.repeats):
            prompts = prompts_for(dom, n, group)
            for lean in ((True, False) if rep % 2 else (False, True)):
                torch.manual_seed(rep)
                _sync(device)
                t0 = time.perf_counter()
                ro = generate(model, tok, prompts, max_new_tokens=cap, temperature=1.0, top_p=1.0, lean_decode=lean)
                _sync(device)
                times[lean].append(time.perf_counter() - t0)
                steps[lean].append(int(ro.mask_BS.sum(1).max()))
        hf, lean = statistics.median(times[False]), statistics.median(times[True])
        n_steps = statistics.median(steps[True])
        print(f"{dom + f' ({n} x {group}, {cap} tokens)':<42} {hf:>9.3f}s {lean:>9.3f}s {n_steps:>6.0f}"
              f" {1e3 * hf / n_steps:>11.1f} {1e3 * lean / n_steps:>13.1f} {hf / lean:>6.2f}x")
    if a.ops:
        dom, n, group, cap = shapes[0]
        prompts = prompts_for(dom, n, group)
        activities = [torch.profiler.ProfilerActivity.CPU] + (
            [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with torch.profiler.profile(activities=activities) as prof:
            generate(model, tok, prompts, max_new_tokens=cap, temperature=1.0, top_p=1.0)
            _sync(device)
        key = "device_time_total" if device.type == "cuda" else "cpu_time_total"
        print(prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=48))


if __name__ == "__main__":
    main()
