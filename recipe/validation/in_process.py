"""Validation in this process.

- ``validate_in_process``: the domains one after another, each seeded by (seed, split, domain) so its rows do not
  depend on the domains before it or on the process that scores it (``recipe.validation.lanes`` relies on that);
- ``validate_in_one_batch`` (the path on CUDA): every decoded domain's prompts in one ``generate`` call, seeded by
  (seed, split). A GPU decode step costs about the same at 64 rows as at 1,000 (it reads the weights either way), so
  nine domains cost one domain's steps instead of nine. The call runs to the largest domain cap and each row keeps
  the tokens of its own domain's cap, which are what a call at that cap samples (a row's draws do not depend on the
  other rows'). Prompts far longer than the rest (long_context's ~1K tokens beside ~100) decode in a call of their
  own: joined, every row's key buffer would grow to their length (tens of GB of K/V at a thousand rows). The
  agentic domain plays its episodes as in process.
"""
from __future__ import annotations

import torch

from recipe.config.schema import EvaluationSection
from recipe.domains.example import AGENTIC_DOMAINS
from recipe.rewards import verify_batch
from recipe.rewards.pairwise_judges import HiddenRubricJudge
from recipe.seeding import derive_seed
from recipe.train.rollout import generate, render_prompt, response_text


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
    """``recipe.validation.domain_validation.validate_samples``'s rows, scored here (the model is in eval mode)."""
    greedy = ecfg.decoding == "greedy"
    k = 1 if greedy else ecfg.samples_per_prompt
    rows: list[dict] = []
    for d in domains:
        if split not in splits[d]:
            raise KeyError(f"domain {d}: no {split!r} split (splits: {sorted(splits[d])})")
        torch.manual_seed(derive_seed(seed, "validation", d) if split == "val" else derive_seed(seed, split, d))
        if d in AGENTIC_DOMAINS:  # scored by playing episodes in the sandbox (recipe.train.agentic_rollouts)
            from recipe.train.agentic_rollouts import agentic_validation_rows
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


LONG_PROMPT_FACTOR = 4   # a prompt this many times the median's length decodes in a call of its own


@torch.no_grad()
def validate_in_one_batch(model, tokenizer, splits: dict, domains: list[str], ecfg: EvaluationSection, *,
                          split: str, thinking: bool, seed: int) -> list[dict]:
    """``validate_in_process``'s rows (same order and fields), the decoded domains sampled in one batch."""
    greedy = ecfg.decoding == "greedy"
    k = 1 if greedy else ecfg.samples_per_prompt
    for d in domains:
        if split not in splits[d]:
            raise KeyError(f"domain {d}: no {split!r} split (splits: {sorted(splits[d])})")
    decoded = [d for d in domains if d not in AGENTIC_DOMAINS]
    recs = [(d, j, dict(r, mode="thinking" if thinking else "instruct"))
            for d in decoded for r in splits[d][split] for j in range(k)]
    prompts = [render_prompt(tokenizer, r, thinking) for _, _, r in recs]
    lengths = [len(p) for p in prompts]
    median = sorted(lengths)[len(lengths) // 2] if lengths else 0
    long_rows = [i for i, n in enumerate(lengths) if n > LONG_PROMPT_FACTOR * median]
    calls = [[i for i in range(len(recs)) if i not in set(long_rows)], long_rows]
    torch.manual_seed(derive_seed(seed, "validation", "one_batch") if split == "val" else
                      derive_seed(seed, split, "one_batch"))
    texts: list[str] = [""] * len(recs)
    for rows in (c for c in calls if c):
        caps = [ecfg.cap_for(recs[i][0]) for i in rows]
        ro = generate(model, tokenizer, [prompts[i] for i in rows], max_new_tokens=max(caps),
                      temperature=ecfg.temperature, top_p=ecfg.top_p, greedy=greedy)
        P = int(ro.mask_BS.any(0).nonzero()[0])             # the prompt's columns (left-padded)
        for b, (i, cap) in enumerate(zip(rows, caps)):
            texts[i] = response_text(tokenizer, ro.input_ids_BS[b, P:P + cap].tolist())
    rewards = score_responses([r for _, _, r in recs], texts)
    by_domain: dict[str, list[dict]] = {d: [] for d in domains}
    for (d, j, r), text, reward in zip(recs, texts, rewards):
        by_domain[d].append({"domain": d, "item_id": r["id"], "sample": j, "response": text, "reward": reward})
    for d in domains:
        if d in AGENTIC_DOMAINS:
            torch.manual_seed(derive_seed(seed, "validation", d) if split == "val" else derive_seed(seed, split, d))
            from recipe.train.agentic_rollouts import agentic_validation_rows
            by_domain[d] = agentic_validation_rows(model, tokenizer, splits[d][split], d, samples=k, greedy=greedy,
                                                   temperature=ecfg.temperature, top_p=ecfg.top_p,
                                                   max_new_tokens=ecfg.cap_for(d))
    return [row for d in domains for row in by_domain[d]]
