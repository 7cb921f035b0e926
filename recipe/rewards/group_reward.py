"""RLHF reward of a prompt's group of G responses from a pairwise judge (RECIPE.md §4.1 row 4, §4.2).

1. Pairs: ``all_pairs`` (Cascade 2: every pair i < j, G(G-1)/2 comparisons) or ``circular`` ((i, i+1 mod G), the
   public Nano-3 recipe). Each comparison gives both responses a score: win 1, loss 0, tie 0.5.
2. Aggregate per response: the mean of its comparison scores (a response in no pair gets 0.5).
3. Length normalisation: r_i -= c * (len_i - mean len) / (max len - min len)  (zero-centred within the group,
   so it moves preferences, not the group mean; 0 when all lengths are equal); c = ``answer_length_penalty_coeff``.
4. Quality-gated conciseness bonus, NeMo-Gym's rule (``genrm_compare``): the globally shortest non-empty answer
   gets ``answer_bonus`` only if its judge aggregate reaches the top ``top_percentile`` cut-off (the aggregate at
   sorted position max(1, floor(p * G)); ties at the cut-off are in). A short answer the judge ranks low gets
   nothing, and the bonus does not pass to the next shortest. Ties in length go to the lower index.

Lengths are words of the visible answer. ``aggregate_pairwise`` is the pure arithmetic (hand-checked in
tests/test_group_reward.py).

One interface, ``GroupJudge.group_rewards(record, responses) -> rewards``, two implementations:
- ``PairwiseGroupJudge`` (tiny, ``kind: rubric_pairwise``): the hidden-rubric pairwise judge over the configured
  pairs, aggregated here;
- ``GenRMCompareClient`` (paper, ``kind: genrm_compare``): NeMo-Gym's ``genrm_compare`` resources server, which
  runs the GenRM on the pairs and aggregates with the same settings; POST ``/compare`` with
  ``{"conversation_history", "response_objs"}``, answer ``{"rewards": [...]}``.
``judge_group_rewards`` runs either over a rollout batch (``recipe/config/judge_section.py`` has the settings).
"""
from __future__ import annotations

import json
import urllib.request
from typing import Protocol

import torch

from recipe.config.judge_section import JudgeConfig
from recipe.rewards.chat_rubric import visible_answer, words
from recipe.rewards.pairwise_judges import HiddenRubricJudge


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
        k = max(1, int(top_percentile * G))  # NeMo-Gym: the score at sorted index max(0, floor(p * G) - 1)
        cut = sorted(base, reverse=True)[k - 1]
        nonempty = [i for i in range(G) if lengths[i] > 0]
        if nonempty:
            shortest = min(nonempty, key=lambda i: (lengths[i], i))
            if base[shortest] >= cut:
                rewards[shortest] += answer_bonus
    return rewards


class GroupJudge(Protocol):
    def group_rewards(self, record: dict, responses: list[str]) -> list[float]: ...


class PairwiseGroupJudge:
    """A pairwise judge over the configured pairs, aggregated by ``aggregate_pairwise``."""

    def __init__(self, cfg: JudgeConfig, judge=None):
        self.cfg, self.judge = cfg, judge or HiddenRubricJudge(cfg.length_tie_break)

    def group_rewards(self, record: dict, responses: list[str]) -> list[float]:
        G, c = len(responses), self.cfg
        comps = []
        for i, j in comparison_pairs(G, c.comparison_strategy):
            v = self.judge.compare(record, responses[i], responses[j])
            comps.append((i, j, v.score_a, v.score_b))
        lengths = [len(words(visible_answer(t) or "")) for t in responses]
        return aggregate_pairwise(G, comps, lengths, length_coeff=c.answer_length_penalty_coeff,
                                  answer_bonus=c.answer_bonus, top_percentile=c.top_percentile)


class GenRMCompareClient:
    """Client of NeMo-Gym's genrm_compare resources server (pairs, GenRM calls and aggregation happen there)."""

    def __init__(self, cfg: JudgeConfig):
        if not cfg.compare_url:
            raise ValueError("judge kind genrm_compare needs judge.compare_url (the genrm_compare server; the cluster "
                             "backend starts it); the local tiny judge is kind: rubric_pairwise")
        self.url, self.timeout_s = cfg.compare_url.rstrip("/") + "/compare", cfg.timeout_s

    def group_rewards(self, record: dict, responses: list[str]) -> list[float]:
        body = {"conversation_history": [{"role": m["role"], "content": m["content"]} for m in record["messages"]],
                "response_objs": [{"output": [{"type": "message", "content": [{"type": "output_text", "text": t}]}]}
                                  for t in responses]}
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - configured endpoint
            rewards = json.loads(resp.read().decode()).get("rewards")
        if not isinstance(rewards, list) or len(rewards) != len(responses):
            raise ValueError(f"genrm_compare at {self.url} returned {rewards!r} for {len(responses)} responses")
        return [float(r) for r in rewards]


def make_group_judge(cfg: JudgeConfig) -> GroupJudge:
    if cfg.kind == "rubric_pairwise":
        return PairwiseGroupJudge(cfg)
    if cfg.kind == "genrm_compare":
        return GenRMCompareClient(cfg)
    raise ValueError(f"unknown judge kind {cfg.kind!r}")


def absolute_judge_scores(records: list[dict], texts: list[str], cfg: JudgeConfig) -> list[float] | None:
    """The judge's absolute score of each response, the number that moves as the policy improves: with all pairs
    compared, the group's mean normalised reward is fixed (each pair hands out 1 point), so the reward a person
    watches cannot show progress. ``rubric_pairwise``: the fraction of the record's hidden rubric items the
    response meets (what the judge compares). ``genrm_compare`` reports its own ``mean_individual_score``: None."""
    if cfg.kind != "rubric_pairwise":
        return None
    from recipe.rewards.chat_rubric import rubric_met
    out = []
    for r, t in zip(records, texts):
        met = rubric_met(r["verifier"]["rubric"], t)
        out.append(sum(met) / len(met))
    return out


def judge_group_rewards(records: list[dict], texts: list[str], G: int, cfg: JudgeConfig) -> torch.Tensor:
    """Rewards [B] for B = P * G responses (group-major), one judge pass over each group."""
    if len(records) % G:
        raise ValueError(f"{len(records)} responses are not whole groups of {G}")
    judge = make_group_judge(cfg)
    out: list[float] = []
    for g in range(len(records) // G):
        out += judge.group_rewards(records[g * G], texts[g * G:(g + 1) * G])
    return torch.tensor(out, dtype=torch.float32)
