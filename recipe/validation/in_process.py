"""Validation in this process: the domains one after another, each seeded by (seed, split, domain) so its rows do not
depend on the domains before it or on the process that scores it (``recipe.validation.lanes`` relies on that)."""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.domains.base import AGENTIC_DOMAINS
from recipe.rewards import verify_batch
from recipe.rewards.judge import HiddenRubricJudge
from recipe.seeding import derive_seed
from recipe.train.rollout import generate, render_prompt


def score_responses(records: list[dict], texts: list[str]) -> list[float]:
    """Validation reward per response (verifier score, or win/tie/loss against the baseline for chat)."""
    out: list[float | None] = [None] * len(records)
    judge = HiddenRubricJudge()
    plain = []
    for i, (r, t) in enumerate(zip(records, texts)):
        baseline = r.get("metadata", {}).get("baseline")
        if r.get("verifier", {}).get("name") == "chat_rubric" and baseline is not None:
            out[i] = judge.compare(r, t, baseline).score_a
        else:
            plain.append(i)
    if plain:
        for i, res in zip(plain, verify_batch([records[i] for i in plain], [texts[i] for i in plain])):
            out[i] = res.score
    return [float(x) for x in out]


@torch.no_grad()
def validate_in_process(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection, *,
                        split: str, thinking: bool, seed: int) -> list[dict]:
    """``recipe.validation.validate.validate_samples``'s rows, scored here (the model is in eval mode)."""
    greedy = ecfg.decoding == "greedy"
    k = 1 if greedy else ecfg.samples_per_prompt
    rows: list[dict] = []
    for d in domains:
        if split not in splits[d]:
            raise KeyError(f"domain {d}: no {split!r} split (splits: {sorted(splits[d])})")
        torch.manual_seed(derive_seed(seed, "validation", d) if split == "val" else derive_seed(seed, split, d))
        if d in AGENTIC_DOMAINS:  # scored by playing episodes in the sandbox (recipe.train.agentic)
            from recipe.train.agentic import agentic_validation_rows
            rows += agentic_validation_rows(model, tokenizer, splits[d][split], d, samples=k, greedy=greedy,
                                            temperature=ecfg.temperature, top_p=ecfg.top_p,
                                            max_new_tokens=ecfg.cap_for(d))
            continue
        recs = [dict(r, mode="thinking" if thinking else "instruct") for r in splits[d][split] for _ in range(k)]
        step = ecfg.batch_size * k
        for i in range(0, len(recs), step):
            chunk = recs[i:i + step]
            prompts = [render_prompt(tokenizer, r, thinking) for r in chunk]
            ro = generate(model, tokenizer, prompts, max_new_tokens=ecfg.cap_for(d),
                          temperature=ecfg.temperature, top_p=ecfg.top_p, greedy=greedy)
            for j, (r, text, reward) in enumerate(zip(chunk, ro.texts, score_responses(chunk, ro.texts))):
                rows.append({"domain": d, "item_id": r["id"], "sample": (i + j) % k, "response": text,
                             "reward": reward})
    return rows
