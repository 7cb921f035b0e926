"""Generation with the lean decode step vs Hugging Face's cached forward, same process, alternated.

    .venv/bin/python benchmarks/bench_decode.py --checkpoint runs/tiny-seed0/01_sft/checkpoint [--threads 2] [--repeats 6]

For three batch shapes of the tiny profile (IF-RL's 32 prompts x 8, multi-domain RL's 24 tool prompts x 8, a
validation batch of 150 math prompts x 2) it times ``generate(..., lean_decode=True)`` and ``lean_decode=False`` on
the same prompts and seed, alternating which runs first, and prints the medians and their ratio. Both paths sample
the same rows (tests/test_rollout.py), so the work is identical.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default="runs/tiny-seed0/01_sft/checkpoint")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=6)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, pool
    from recipe.model import load_checkpoint
    from recipe.train.rollout import generate, render_prompt

    cfg = load_config("tiny")
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    model, tok = load_checkpoint(a.checkpoint)
    rng = random.Random(0)
    print(f"{'batch':<42} {'HF decode':>10} {'lean':>10} {'ratio':>7}   (median of {a.repeats}, {a.threads} threads)")
    shapes = [("instruction_following", 32, 8, cfg.if_rl.max_response_tokens),    # the profile's own caps
              ("tool_call", 24, 8, cfg.multi_domain_rl.max_response_tokens), ("math", 150, 2, cfg.evaluation.cap_for("math"))]
    for dom, n, group, cap in shapes:
        records = pool(splits[dom]["train"], "rl")
        times: dict[bool, list[float]] = {True: [], False: []}
        for rep in range(a.repeats):
            prompts = [render_prompt(tok, r, True) for r in rng.sample(records, n) for _ in range(group)]
            for lean in ((True, False) if rep % 2 else (False, True)):
                torch.manual_seed(rep)
                t0 = time.perf_counter()
                generate(model, tok, prompts, max_new_tokens=cap, temperature=1.0, top_p=1.0, lean_decode=lean)
                times[lean].append(time.perf_counter() - t0)
        hf, lean = statistics.median(times[False]), statistics.median(times[True])
        print(f"{dom + f' ({n} x {group}, {cap} tokens)':<42} {hf:>9.3f}s {lean:>9.3f}s {hf / lean:>6.2f}x")


if __name__ == "__main__":
    main()
