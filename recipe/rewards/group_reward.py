"""RLHF reward of a prompt's group of G responses from a pairwise judge (RECIPE.md §4.1 row 4, §4.2).

1. Pairs: ``all_pairs`` (Cascade 2: every pair i < j, G(G-1)/2 comparisons) or ``circular`` ((i, i+1 mod G), the
   public Nano-3 recipe). Each comparison gives both responses a score: win 1, loss 0, tie 0.5.
2. Aggregate per response: the mean of its comparison scores (a response in no pair gets 0.5).
3. Length normalisation: r_i -= c * (len_i - mean len) / (max len - min len)  (zero-centred within the group,
   so it moves preferences, not the group mean; 0 when all lengths are equal); c = ``answer_length_penalty_coeff``.
4. Quality-gated conciseness bonus: the shortest answer among the top ``top_percentile`` of the group by the
   judge aggregate (at least one response; ties at the cut-off are all in) gets ``answer_bonus``, provided its
   aggregate is above 0 (it won or tied something). Ties in length go to the lower index.

Lengths are words of the visible answer. ``aggregate_pairwise`` is the pure arithmetic (hand-checked in
tests/test_group_reward.py); ``judge_group_rewards`` runs a judge over a rollout batch. The cluster backend's
judge is NeMo-Gym's ``genrm_compare`` server with the same settings (``recipe/config/judge_section.py``).
"""
from __future__ import annotations

import math

import torch

from recipe.config.judge_section import JudgeConfig
from recipe.rewards.chat_rubric import visible_answer, words
from recipe.rewards.judge import HiddenRubricJudge


def comparison_pairs(G: int, strategy: str) -> list[tuple[int, int]]:
    if strategy == "all_pairs":
        return [(i, j) for i in range(G) for j in range(i + 1, G)]
    if strategy == "circular":
        return [(i, (i + 1) % G) for i in range(G)] if G > 2 else [(0, 1)] if G == 2 else []
    raise ValueError(f"unknown comparison_strategy {strategy!r}: all_pairs or circular")


def aggregate_pairwise(G: int, comparisons: list[tuple[int, int, float, float]], lengths: list[int], *,
                       length_coeff: float = 0.0, answer_bonus: float = 0.0, top_percentile: float = 1.0) -> list[float]:
    """Rewards [G] from comparisons (i, j, score_i, score_j) and answer lengths; see the module docstring."""
    if len(lengths) != G:
        raise ValueError(f"aggregate_pairwise: {len(lengths)} lengths for a group of {G}")
    got: list[list[float]] = [[] for _ in range(G)]
    for i, j, si, sj in comparisons:
        got[i].append(si)
        got[j].append(sj)
    base = [sum(s) / len(s) if s else 0.5 for s in got]
    rewards = list(base)
    lo, hi = min(lengths), max(lengths)
    if length_coeff and hi > lo:
        mean = sum(lengths) / G
        rewards = [r - length_coeff * (n - mean) / (hi - lo) for r, n in zip(rewards, lengths)]
    if answer_bonus:
        k = max(1, math.ceil(top_percentile * G))
        cut = sorted(base, reverse=True)[k - 1]
        gated = [i for i in range(G) if base[i] >= cut and base[i] > 0]
        if gated:
            best = min(gated, key=lambda i: (lengths[i], i))
            rewards[best] += answer_bonus
    return rewards


def make_group_judge(cfg: JudgeConfig):
    if cfg.kind == "rubric_pairwise":
        return HiddenRubricJudge()
    raise ValueError(f"judge kind {cfg.kind!r} runs on the cluster backend (NeMo-Gym genrm_compare); the local "
                     f"backend implements rubric_pairwise")


def judge_group_rewards(records: list[dict], texts: list[str], G: int, cfg: JudgeConfig) -> torch.Tensor:
    """Rewards [B] for B = P * G responses (group-major), one judge pass over each group's pairs."""
    if len(records) % G:
        raise ValueError(f"{len(records)} responses are not whole groups of {G}")
    judge = make_group_judge(cfg)
    out: list[float] = []
    for g in range(len(records) // G):
        rec, resp = records[g * G], texts[g * G:(g + 1) * G]
        comps = []
        for i, j in comparison_pairs(G, cfg.comparison_strategy):
            v = judge.compare(rec, resp[i], resp[j])
            comps.append((i, j, v.score_a, v.score_b))
        lengths = [len(words(visible_answer(t) or "")) for t in resp]
        out += aggregate_pairwise(G, comps, lengths, length_coeff=cfg.answer_length_penalty_coeff,
                                  answer_bonus=cfg.answer_bonus, top_percentile=cfg.top_percentile)
    return torch.tensor(out, dtype=torch.float32)
