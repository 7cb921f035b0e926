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
  ``recipe.validation.samples`` writes as JSONL); ``summarize`` turns rows into
  ``{domain: {score, ci_low, ci_high, n}}`` in %, n = prompts (``recipe.stats.mean_ci`` over per-prompt means).
"""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.stats import item_means, mean_ci
from recipe.validation.in_process import validate_in_one_batch, validate_in_process
from recipe.validation.lanes import validate_in_lanes


@torch.no_grad()
def validate_samples(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection, *,
                     split: str = "val", thinking: bool | None = None, seed: int = 0) -> list[dict]:
    """``thinking``: the mode prompts are rendered in (default ``ecfg.thinking``)."""
    thinking = ecfg.thinking if thinking is None else thinking
    model.eval()
    if next(model.parameters()).device.type == "cuda":   # one decode batch for the domains (in_process's docstring)
        return validate_in_one_batch(model, tokenizer, splits, domains, ecfg, split=split, thinking=thinking,
                                     seed=seed)
    if ecfg.lanes > 1 and len(domains) > 1:
        return validate_in_lanes(model, tokenizer, splits, domains, ecfg, split=split, thinking=thinking, seed=seed)
    return validate_in_process(model, tokenizer, splits, domains, ecfg, split=split, thinking=thinking, seed=seed)


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
