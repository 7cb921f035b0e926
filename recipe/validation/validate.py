"""Per-domain validation of a checkpoint on held-out prompts, graded by the same verifiers as training, in thinking
mode, with a 95% CI on every score and every sample kept.

- Splits: ``val`` is the *report* split (every table, every delta), ``select`` the *selection* split (choosing
  MOPD teachers); see ``recipe.domains``.
- ``decoding: sample`` reports avg@k at the configured temperature (as the paper reports most benchmarks, EVAL.md
  §2), ``greedy`` one greedy answer per prompt. Sampling is seeded by (seed, split, domain) only, so every
  checkpoint of a run is scored with the same random numbers (common random numbers make comparisons less noisy).
- A response's reward is the verifier score (strict: IF needs every instruction); in the ``chat`` domain it is the
  judge's verdict against the prompt's fixed baseline response (win 1, tie 0.5, loss 0), so the domain score is
  the win rate against the baselines.
- ``validate_samples`` returns one row per response: domain, item id, sample index, response, reward (what
  ``recipe.validation.samples`` writes as JSONL); ``summarize`` turns rows into ``{domain: {score, ci_low, ci_high, n}}``
  in %, n = prompts (``recipe.stats.mean_ci`` over per-prompt means).
"""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.rewards import verify_batch
from recipe.rewards.judge import HiddenRubricJudge
from recipe.seeding import derive_seed
from recipe.stats import item_means, mean_ci
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


AGENTIC_DOMAINS = {"swe_agentic"}  # multi-turn tool loop, not one response per prompt


@torch.no_grad()
def validate_samples(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection, *,
                     split: str = "val", thinking: bool = True, seed: int = 0) -> list[dict]:
    model.eval()
    if ecfg.lanes > 1 and len(domains) > 1:
        from recipe.validation.lanes import validate_in_lanes
        return validate_in_lanes(model, tokenizer, splits, domains, ecfg, split=split, thinking=thinking, seed=seed)
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


def summarize(rows: list[dict]) -> dict[str, dict]:
    """{domain: {score, ci_low, ci_high, n}} in %, n = prompts; the interval is over per-prompt means."""
    out: dict[str, dict] = {}
    for d in dict.fromkeys(r["domain"] for r in rows):
        means = list(item_means(r for r in rows if r["domain"] == d).values())
        out[d] = mean_ci(means, scale=100.0, bounds=(0.0, 100.0)).as_dict()
    return out


def validate_domains(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection,
                     thinking: bool = True, seed: int = 0, split: str = "val") -> dict[str, float]:
    """Plain per-domain scores (%); see ``validate_samples`` / ``summarize`` for samples and intervals."""
    rows = validate_samples(model, tokenizer, splits, domains, ecfg, split=split, thinking=thinking, seed=seed)
    return {d: e["score"] for d, e in summarize(rows).items()}
