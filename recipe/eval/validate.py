"""Per-domain validation of a checkpoint on each domain's held-out prompts, graded by the same verifiers as
training, in thinking mode. ``decoding: sample`` reports avg@k at the configured temperature (as the paper reports
most benchmarks, EVAL.md §2), ``greedy`` one greedy answer per prompt. A domain's score is the mean verifier score
x 100 (strict: IF needs every instruction). Sampling is seeded by (seed, domain) only, so every checkpoint of a run
is scored with the same random numbers (common random numbers make checkpoint comparisons less noisy)."""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.rewards import verify_batch
from recipe.seeding import derive_seed
from recipe.train.rollout import generate, render_prompt


@torch.no_grad()
def validate_domains(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection,
                     thinking: bool = True, seed: int = 0) -> dict[str, float]:
    scores: dict[str, float] = {}
    model.eval()
    greedy = ecfg.decoding == "greedy"
    k = 1 if greedy else ecfg.samples_per_prompt
    for d in domains:
        torch.manual_seed(derive_seed(seed, "validation", d))
        recs = [dict(r, mode="thinking" if thinking else "instruct") for r in splits[d]["val"] for _ in range(k)]
        total = 0.0
        step = ecfg.batch_size * k
        for i in range(0, len(recs), step):
            chunk = recs[i:i + step]
            prompts = [render_prompt(tokenizer, r, thinking) for r in chunk]
            ro = generate(model, tokenizer, prompts, max_new_tokens=ecfg.max_new_tokens,
                          temperature=ecfg.temperature, top_p=ecfg.top_p, greedy=greedy)
            total += sum(r.score for r in verify_batch(chunk, ro.texts))
        scores[d] = round(100.0 * total / max(1, len(recs)), 2)
    return scores
