"""The on-policy loop shared by every RL stage, as NeMo-RL runs it (MOPD is GRPO with another estimator):

    generate -> score -> advantage -> exactly one optimizer update per rollout batch -> log -> checkpoint

Per step (seeded by ``step_seed`` so a resumed run repeats an uninterrupted one):
1. draw ``prompts_per_step`` prompts from the stage's domains (``domain_weights``), render each in the stage's mode;
2. sample ``generations_per_prompt`` responses each (pi_inf log-probs kept);
3. score with the verifiers (``recipe.rewards``); an unfinished response gets reward 0 when
   ``overlong_reward_zero``, and is excluded from the loss when ``overlong_filtering``;
4. ``grpo``: dynamic filtering drops groups whose rewards are all equal; agentless-SWE prompt mask drops groups
   whose best reward <= ``prompt_mask_max_reward``; ``opd``: teacher log-probs from the domain's teacher;
5. one AdamW update (grad-clipped) on what remains; if nothing remains the step is logged with ``updated: false``.
"""
from __future__ import annotations

import random
import time
from collections import defaultdict

import torch

from recipe.config.stages import MOPDConfig, RLStageConfig
from recipe.domains import pool as prompt_pool
from recipe.rewards import verify_batch
from recipe.train.advantages import AdvantageInputs, get_estimator
from recipe.train.context import StageContext
from recipe.train.losses import grpo_loss, mopd_loss
from recipe.train.progress import progress_bar
from recipe.train.rollout import generate, record_thinking, render_prompt, sequence_logprobs
from recipe.train.schedule import lr_at
from recipe.train.state import load_state, save_state, step_seed


def rl_prompt_pools(ctx: StageContext, scfg: RLStageConfig) -> dict[str, list[dict]]:
    """The stage's RL prompts per domain (built once per stage, not per step)."""
    missing = [d for d in scfg.domains if d not in ctx.splits]
    if missing:
        raise KeyError(f"stage {ctx.stage}: no data for domains {missing}; generated domains: {sorted(ctx.splits)}")
    pools = {d: prompt_pool(ctx.splits[d]["train"], "rl") for d in scfg.domains}
    empty = [d for d, p in pools.items() if not p]
    if empty:
        raise ValueError(f"domains {empty}: the RL prompt pool is empty (domains.tiny.rl_pool_fraction)")
    return pools


def sample_prompts(rng: random.Random, pools: dict[str, list[dict]], scfg: RLStageConfig) -> list[dict]:
    weights = scfg.domain_weights or {d: 1.0 for d in scfg.domains}
    doms = list(scfg.domains)
    w = [weights.get(d, 0.0) for d in doms]
    picks = []
    for _ in range(scfg.prompts_per_step):  # domain then prompt, drawn alternately (the seeded order)
        d = rng.choices(doms, weights=w)[0]
        picks.append(pools[d][rng.randrange(len(pools[d]))])
    return picks


def _trim(batch_cols: list[torch.Tensor], attn: torch.Tensor) -> list[torch.Tensor]:
    """Drop columns that are padding in every row (left of the longest prompt, right of the longest answer)."""
    used = attn.bool().any(0).nonzero().flatten()
    lo, hi = int(used[0]), int(used[-1]) + 1
    return [t[:, lo:hi] for t in batch_cols]


def rl_step(ctx: StageContext, scfg: RLStageConfig, opt, step: int, pools: dict[str, list[dict]],
            teachers: dict | None = None, ref_model=None) -> dict:
    model, tok = ctx.model, ctx.tokenizer
    t0 = time.perf_counter()
    seed = step_seed(ctx.seed, ctx.stage, step)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    G = scfg.generations_per_prompt
    prompts = sample_prompts(rng, pools, scfg)
    records = []
    for p in prompts:
        thinking = record_thinking(p, scfg.mode)
        records.extend([dict(p, mode="thinking" if thinking else "instruct")] * G)
    texts = [render_prompt(tok, r, r["mode"] == "thinking") for r in records]
    ro = generate(model, tok, texts, max_new_tokens=scfg.max_response_tokens, temperature=scfg.temperature,
                  top_p=scfg.top_p)
    t_gen = time.perf_counter() - t0
    v = ctx.cfg.verify
    results = verify_batch(records, ro.texts, workers=v.workers, ray_address=v.ray_address,
                           pool_threshold=v.pool_threshold, math_timeout_s=v.math_timeout_s)
    rewards_B = torch.tensor([r.score for r in results], dtype=torch.float32)
    if scfg.overlong_reward_zero:
        rewards_B = torch.where(ro.finished_B, rewards_B, torch.zeros_like(rewards_B))
    group_B = torch.arange(len(prompts)).repeat_interleave(G)
    keep_B = torch.ones(len(records), dtype=torch.bool)
    mask_BS = ro.mask_BS.clone()
    if scfg.overlong_filtering:
        mask_BS = mask_BS * ro.finished_B[:, None].float()
    kept_groups = len(prompts)
    if scfg.advantage_estimator == "grpo":
        r_PG = rewards_B.view(len(prompts), G)
        keep_P = torch.ones(len(prompts), dtype=torch.bool)
        if scfg.dynamic_filtering:
            keep_P &= r_PG.std(1, unbiased=False) > 1e-8
        if scfg.prompt_mask_max_reward is not None:
            keep_P &= r_PG.max(1).values > scfg.prompt_mask_max_reward
        keep_B = keep_P.repeat_interleave(G)
        kept_groups = int(keep_P.sum())
    keep_B &= mask_BS.sum(1) > 0

    metrics = {"step": step, "reward_mean": rewards_B.mean().item(), "kept_groups": kept_groups,
               "overlong_frac": 1 - ro.finished_B.float().mean().item(),
               "response_tokens_mean": ro.mask_BS.sum(1).mean().item(), "gen_time_s": t_gen}
    by_dom = defaultdict(list)
    for r, x in zip(records, rewards_B.tolist()):
        by_dom[r["domain"]].append(x)
    metrics.update({f"reward/{d}": sum(v) / len(v) for d, v in by_dom.items()})
    lr = lr_at(step, scfg, scfg.steps)
    metrics["lr"] = lr
    if not keep_B.any():
        metrics.update(updated=False, time_s=time.perf_counter() - t0)
        return metrics

    idx = keep_B.nonzero().flatten()
    ids, attn, m_BS, inf_BS = _trim([ro.input_ids_BS[idx], ro.attention_mask_BS[idx], mask_BS[idx],
                                     ro.inf_logprobs_BS[idx]], ro.attention_mask_BS[idx])
    for g in opt.param_groups:
        g["lr"] = lr
    estimator = get_estimator(scfg.advantage_estimator)
    model.train()
    lp_BS = sequence_logprobs(model, ids, attn, m_BS)
    if scfg.advantage_estimator == "grpo":
        adv_BS = estimator.compute_advantage(AdvantageInputs(rewards_B=rewards_B[idx], group_ids_B=group_B[idx],
                                                             mask_BS=m_BS))
        ref_BS = None
        if scfg.kl_coef > 0:
            if ref_model is None:
                raise ValueError(f"{ctx.stage}: kl_coef={scfg.kl_coef} needs a reference model")
            with torch.no_grad():
                ref_BS = sequence_logprobs(ref_model, ids, attn, m_BS)
        loss, lm = grpo_loss(lp_BS, adv_BS, m_BS, ref_logprobs_BS=ref_BS, kl_coef=scfg.kl_coef)
    else:
        assert isinstance(scfg, MOPDConfig)
        teacher_BS = torch.zeros_like(lp_BS)
        doms = [records[i]["domain"] for i in idx.tolist()]
        with torch.no_grad():
            for d in sorted(set(doms)):
                rows = torch.tensor([j for j, x in enumerate(doms) if x == d])
                teacher_BS[rows] = sequence_logprobs(teachers[d], ids[rows], attn[rows], m_BS[rows])
        adv_BS = estimator.compute_advantage(AdvantageInputs(rewards_B=None, group_ids_B=None, mask_BS=m_BS,
                                                             train_logprobs_BS=lp_BS, teacher_logprobs_BS=teacher_BS))
        loss, lm = mopd_loss(lp_BS, inf_BS, adv_BS, m_BS, low=scfg.importance_mask_low,
                             high=scfg.importance_mask_high, normalization=scfg.loss_normalization)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), scfg.grad_clip)
    opt.step()
    opt.zero_grad(set_to_none=True)
    model.eval()
    metrics.update(lm)
    metrics.update(updated=True, grad_norm=float(gn), trained_responses=len(idx),
                   time_s=time.perf_counter() - t0)
    return metrics


def train_rl(ctx: StageContext, scfg: RLStageConfig, *, teachers: dict | None = None, ref_model=None) -> dict:
    if scfg.advantage_estimator == "opd" and not teachers:
        raise ValueError(f"{ctx.stage}: the opd estimator needs teachers (one per domain)")
    opt = torch.optim.AdamW(ctx.model.parameters(), lr=scfg.lr, betas=tuple(scfg.adam_betas),
                            weight_decay=scfg.weight_decay)
    start = load_state(ctx.state_dir, ctx.model, opt) or 0
    ctx.run.truncate_metrics(ctx.stage, start)
    pools = rl_prompt_pools(ctx, scfg)
    bar = progress_bar(scfg.steps, start, ctx.stage, ctx.progress)
    for step in range(start, scfg.steps):
        m = rl_step(ctx, scfg, opt, step, pools, teachers=teachers, ref_model=ref_model)
        ctx.run.append_metrics(ctx.stage, m)
        bar.update(1)
        bar.set_postfix(reward=f"{m['reward_mean']:.2f}")
        if (step + 1) % scfg.save_every == 0 and step + 1 < scfg.steps:
            save_state(ctx.state_dir, ctx.model, opt, step + 1)
    bar.close()
    rows = ctx.run.read_metrics(ctx.stage)
    return {"steps": scfg.steps, "final_reward_mean": rows[-1]["reward_mean"] if rows else None,
            "updates": sum(1 for r in rows if r.get("updated"))}
