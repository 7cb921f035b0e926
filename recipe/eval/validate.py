"""Per-domain validation: greedy decoding in thinking mode on each domain's held-out prompts, graded by the same
verifiers as training. A domain's score is the mean verifier score x 100 (strict: IF needs every instruction)."""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.rewards import verify_batch
from recipe.train.rollout import generate, render_prompt


@torch.no_grad()
def validate_domains(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection,
                     thinking: bool = True) -> dict[str, float]:
    scores: dict[str, float] = {}
    model.eval()
    for d in domains:
        recs = [dict(r, mode="thinking" if thinking else "instruct") for r in splits[d]["val"]]
        total = 0.0
        for i in range(0, len(recs), ecfg.batch_size):
            chunk = recs[i:i + ecfg.batch_size]
            prompts = [render_prompt(tokenizer, r, thinking) for r in chunk]
            ro = generate(model, tokenizer, prompts, max_new_tokens=ecfg.max_new_tokens,
                          temperature=ecfg.temperature, top_p=ecfg.top_p, greedy=ecfg.decoding == "greedy")
            total += sum(r.score for r in verify_batch(chunk, ro.texts))
        scores[d] = round(100.0 * total / max(1, len(recs)), 2)
    return scores
