"""The on-policy loop shared by every RL stage, as NeMo-RL runs it (MOPD is GRPO with another estimator):

    generate -> score -> advantage -> exactly one optimizer update per rollout batch -> log -> checkpoint

Per step (seeded by ``step_seed`` so a resumed run repeats an uninterrupted one):
1. draw ``prompts_per_step`` prompts from the stage's domains (``domain_weights``), render each in the stage's mode;
2. sample ``generations_per_prompt`` responses each (pi_inf log-probs kept);
3. score with the verifiers (``recipe.rewards``) or, for ``reward: pairwise_judge``, the judge over all pairs of
   each group (``recipe.rewards.group_reward``);
4. ``grpo``: keep groups (dynamic filtering, agentless-SWE prompt mask) and refill the batch with further prompts
   until ``prompts_per_step`` groups are kept or ``dynamic_filtering_max_rounds`` rounds ran (shortfall logged);
   advantages over whole groups, then overlong-filtered responses leave the loss; ``opd``: teacher log-probs
   from each example's routed teacher;
5. one AdamW update (grad-clipped) on what remains; if nothing remains the step is logged with ``updated: false``.

Every rule is a pure function in ``recipe.train.rl_rules`` (tested on hand-built batches in
tests/test_rl_rules.py); this module only runs the loop.
"""
from __future__ import annotations

import random
import time
from collections import defaultdict

import torch

from recipe.config.stages import MOPDConfig, RLStageConfig
from recipe.domains import pool as prompt_pool
from recipe.model import save_checkpoint
from recipe.rewards import verify_batch
from recipe.runs.teachers import candidate_dir
from recipe.train import rl_rules as rules
from recipe.train.advantages import AdvantageInputs, get_estimator
from recipe.train.context import StageContext
from recipe.train.losses import grpo_loss, masked_mean, mopd_loss, teacher_forward_kl
from recipe.train.micro_batches import accumulate_gradients, logprobs_in_passes, loss_normalizer, trim_columns
from recipe.train.optimizer import adamw
from recipe.train.progress import progress_bar
from recipe.train.rollout import (RolloutBatch, generate, record_thinking, render_prompt, response_positions,
                                  sequence_logprobs)
from recipe.train.schedule import lr_at
from recipe.train.state import SaveClock, resume_step, save_state, step_seed


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


def sample_prompts(rng: random.Random, pools: dict[str, list[dict]], scfg: RLStageConfig,
                   n: int | None = None) -> list[dict]:
    weights = scfg.domain_weights or {d: 1.0 for d in scfg.domains}
    doms = list(scfg.domains)
    w = [weights.get(d, 0.0) for d in doms]
    picks = []
    for _ in range(scfg.prompts_per_step if n is None else n):  # domain then prompt, drawn alternately (seeded)
        d = rng.choices(doms, weights=w)[0]
        picks.append(pools[d][rng.randrange(len(pools[d]))])
    return picks


def concat_rollouts(batches: list[RolloutBatch], pad_id: int) -> RolloutBatch:
    """One batch from several rounds: prompts are left-padded and responses right-padded to common widths."""
    if len(batches) == 1:
        return batches[0]
    starts = [int(b.mask_BS.bool().any(0).nonzero()[0]) for b in batches]  # prompt width of each round
    P = max(starts)
    R = max(b.input_ids_BS.shape[1] - s for b, s in zip(batches, starts))

    def pad(t, left, right, value):
        return torch.nn.functional.pad(t, (left, right), value=value)

    cols = {"input_ids_BS": [], "attention_mask_BS": [], "mask_BS": [], "inf_logprobs_BS": []}
    for b, s in zip(batches, starts):
        left, right = P - s, R - (b.input_ids_BS.shape[1] - s)
        cols["input_ids_BS"].append(pad(b.input_ids_BS, left, right, pad_id))
        for k in ("attention_mask_BS", "mask_BS", "inf_logprobs_BS"):
            cols[k].append(pad(getattr(b, k), left, right, 0))
    return RolloutBatch(**{k: torch.cat(v) for k, v in cols.items()}, texts=[t for b in batches for t in b.texts],
                        finished_B=torch.cat([b.finished_B for b in batches]))


def _select_rows(ro: RolloutBatch, rows: list[int]) -> RolloutBatch:
    idx = torch.tensor(rows, dtype=torch.long)
    return RolloutBatch(input_ids_BS=ro.input_ids_BS[idx], attention_mask_BS=ro.attention_mask_BS[idx],
                        mask_BS=ro.mask_BS[idx], inf_logprobs_BS=ro.inf_logprobs_BS[idx],
                        texts=[ro.texts[i] for i in rows], finished_B=ro.finished_B[idx])


def score_responses(ctx: StageContext, scfg: RLStageConfig, records: list[dict], texts: list[str],
                    group_size: int) -> torch.Tensor:
    """Rewards [B]: the verifiers per response, or (``reward: pairwise_judge``) the judge over all pairs of each
    prompt's group (``recipe.rewards.group_reward``)."""
    if scfg.reward == "pairwise_judge":
        from recipe.rewards.group_reward import judge_group_rewards
        return judge_group_rewards(records, texts, group_size, scfg.judge)
    v = ctx.cfg.verify
    if scfg.if_grading is not None:   # the stage's IF reward over the records' own grading_mode
        records = [dict(r, verifier={**r["verifier"], "grading_mode": scfg.if_grading})
                   if (r.get("verifier") or {}).get("name") == "instruction_following" else r for r in records]
    results = verify_batch(records, texts, workers=v.workers, ray_address=v.ray_address,
                           pool_threshold=v.pool_threshold, math_timeout_s=v.math_timeout_s)
    return torch.tensor([r.score for r in results], dtype=torch.float32)


def policy_loss(model, scfg: RLStageConfig, ids, attn, m_BS, inf_BS, *, adv_B=None, ref_model=None,
                teacher_rows=(), normalizer: int | None = None, logprob_batch: int | None = None,
                domains_B: list[str] | None = None) -> tuple[torch.Tensor, dict]:
    """The update's loss and its metrics, built on the policy's device (on CUDA no device -> host copy and no wait
    until the metrics are read). GRPO (``scfg.advantage_estimator == "grpo"``): each row's group advantage
    ``adv_B`` over its response tokens, with the k3 KL to ``ref_model`` when ``scfg.kl_coef > 0``; OPD: the
    token-level reverse-KL advantage against each row's domain teacher (``teacher_rows``: (teacher, rows) pairs),
    importance-masked against the rollout's log-probs ``inf_BS`` (paper Eq. 2-4). The rows' tensors come from the
    CPU; every log-prob is taken at the rollouts' sampling temperature. ``normalizer``: the whole batch's count when
    these rows are one micro-batch of it (``recipe.train.micro_batches``); ``logprob_batch``: rows a reference or
    teacher pass runs at once."""
    T = scfg.temperature
    fkl_coef = getattr(scfg, "forward_kl_coef", 0.0)
    if fkl_coef > 0:   # and the whole distribution at each response token (the teacher term needs it)
        lp_BS, student_NV = sequence_logprobs(model, ids, attn, m_BS, T, on_device=True, dists=True)
    else:
        lp_BS = sequence_logprobs(model, ids, attn, m_BS, T, on_device=True)
    dev = lp_BS.device
    mask_dev = m_BS.to(dev, non_blocking=True)
    if scfg.advantage_estimator == "grpo":
        adv_BS = adv_B[:, None].to(dev, non_blocking=True) * mask_dev
        ref_BS = None
        if scfg.kl_coef > 0:
            ref_BS = logprobs_in_passes(ref_model, ids, attn, m_BS, T, logprob_batch, on_device=True).to(dev)
        return grpo_loss(lp_BS, adv_BS, mask_dev, ref_logprobs_BS=ref_BS, kl_coef=scfg.kl_coef, normalizer=normalizer)
    teacher_BS = torch.zeros_like(lp_BS)
    teacher_NV = student_NV.new_empty(student_NV.shape) if fkl_coef > 0 else None
    position_BS = response_positions(m_BS) if fkl_coef > 0 else None
    for teacher, rows in teacher_rows:
        r = torch.tensor(rows)
        if fkl_coef > 0:   # one pass over the teacher's rows (logprob_batch is not applied to this term)
            with torch.no_grad():
                t_BS, t_NV = sequence_logprobs(teacher, ids[r], attn[r], m_BS[r], T, on_device=True, dists=True)
            teacher_BS[r.to(dev)] = t_BS.to(dev)
            rr, cc = m_BS[r].bool().nonzero(as_tuple=True)
            teacher_NV[position_BS[r[rr], cc].to(dev)] = t_NV
        else:
            teacher_BS[r.to(dev)] = logprobs_in_passes(teacher, ids[r], attn[r], m_BS[r], T, logprob_batch,
                                                       on_device=True).to(dev)
    adv_BS = get_estimator(scfg.advantage_estimator).compute_advantage(AdvantageInputs(
        rewards_B=None, group_ids_B=None, mask_BS=mask_dev, train_logprobs_BS=lp_BS, teacher_logprobs_BS=teacher_BS,
        discount=getattr(scfg, "kl_discount", 0.0)))
    inf_dev = inf_BS.to(dev, non_blocking=True)
    loss, metrics = mopd_loss(lp_BS, inf_dev, adv_BS, mask_dev, low=scfg.importance_mask_low,
                              high=scfg.importance_mask_high, normalization=scfg.loss_normalization,
                              normalizer=normalizer)
    if fkl_coef > 0:
        fkl_BS = torch.zeros_like(lp_BS)
        r_idx, c_idx = m_BS.bool().nonzero(as_tuple=True)
        fkl_BS[r_idx.to(dev), c_idx.to(dev)] = teacher_forward_kl(student_NV, teacher_NV)
        fkl = masked_mean(fkl_BS, mask_dev, scfg.loss_normalization, normalizer)
        loss = loss + fkl_coef * fkl
        metrics["forward_kl"] = float(fkl.detach()) if normalizer is None else float(masked_mean(
            fkl_BS.detach(), mask_dev, scfg.loss_normalization))
    if domains_B is not None:
        metrics.update(rules.opd_domain_sums(domains_B, lp_BS.detach(), teacher_BS, inf_dev, mask_dev,
                                             low=scfg.importance_mask_low, high=scfg.importance_mask_high))
    return loss, metrics


def policy_gradient(model, scfg: RLStageConfig, ids, attn, m_BS, inf_BS, *, adv_B=None, ref_model=None,
                    domains_B: list[str] | None = None, teachers: dict | None = None,
                    micro_batch: int | None = None, logprob_batch: int | None = None) -> dict:
    """The update's gradient, accumulated in the parameters' ``.grad`` over micro-batches of ``micro_batch`` rows
    (``None``: one pass), each trimmed to its own columns and normalised by the whole batch's count, so the gradient
    equals one pass's (``recipe.train.micro_batches``). Returns the batch's metrics."""
    grpo = scfg.advantage_estimator == "grpo"
    normalizer = None   # one pass: each loss counts its own rows (the same count, computed as before)
    if micro_batch is not None and micro_batch < m_BS.shape[0]:
        normalizer = loss_normalizer(m_BS, per_sequence=not grpo and scfg.loss_normalization == "per_sequence")

    def loss_of_rows(rows: torch.Tensor):
        c_ids, c_attn, c_m, c_inf = trim_columns([ids[rows], attn[rows], m_BS[rows], inf_BS[rows]], attn[rows])
        if grpo:
            return policy_loss(model, scfg, c_ids, c_attn, c_m, c_inf, adv_B=adv_B[rows], ref_model=ref_model,
                               normalizer=normalizer, logprob_batch=logprob_batch)
        doms = [domains_B[i] for i in rows.tolist()]
        return policy_loss(model, scfg, c_ids, c_attn, c_m, c_inf, normalizer=normalizer, logprob_batch=logprob_batch,
                           teacher_rows=rules.teacher_rows(doms, teachers), domains_B=doms)

    return accumulate_gradients(loss_of_rows, m_BS, micro_batch)


def rl_step(ctx: StageContext, scfg: RLStageConfig, opt, step: int, pools: dict[str, list[dict]],
            teachers: dict | None = None, ref_model=None) -> dict:
    model, tok = ctx.model, ctx.tokenizer
    t0 = time.perf_counter()
    seed = step_seed(ctx.seed, ctx.stage, step)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    G = scfg.generations_per_prompt
    grpo = scfg.advantage_estimator == "grpo"
    rounds: list[tuple[list[dict], RolloutBatch, torch.Tensor]] = []
    episode_stats: list = []  # agentic rollouts: turns and how episodes ended
    t_gen = 0.0

    def draw_round(_round: int, n: int) -> torch.Tensor:
        nonlocal t_gen
        records = []
        for p in sample_prompts(rng, pools, scfg, n):
            thinking = record_thinking(p, scfg.mode)
            records.extend([dict(p, mode="thinking" if thinking else "instruct")] * G)
        tg = time.perf_counter()
        if scfg.rollout == "agentic":  # multi-turn episodes in the sandbox; the reward comes with them
            from recipe.train.agentic_rollouts import run_episodes
            ar = run_episodes(model, tok, records, max_turns=scfg.max_turns, max_new_tokens=scfg.max_response_tokens,
                              temperature=scfg.temperature, top_p=scfg.top_p, turn_time_limit_s=scfg.turn_time_limit_s)
            ro, rewards_B = ar.ro, ar.rewards_B
            episode_stats.append(ar)
            t_gen += time.perf_counter() - tg
        else:
            # a group's G records are one prompt: render it once
            texts = [t for r in records[::G] for t in [render_prompt(tok, r, r["mode"] == "thinking")] * G]
            ro = generate(model, tok, texts, max_new_tokens=scfg.max_response_tokens, temperature=scfg.temperature,
                          top_p=scfg.top_p)
            t_gen += time.perf_counter() - tg
            rewards_B = score_responses(ctx, scfg, records, ro.texts, G)  # MOPD: logged only
        if scfg.overlong_reward_zero:
            rewards_B = rules.unfinished_reward_zero(rewards_B, ro.finished_B)
        rounds.append((records, ro, rewards_B))
        if not grpo:
            return torch.ones(n, dtype=torch.bool)
        return rules.keep_groups(rewards_B.view(n, G), dynamic_filtering=scfg.dynamic_filtering,
                                 prompt_mask_max_reward=scfg.prompt_mask_max_reward)

    fill = rules.refill(draw_round, target=scfg.prompts_per_step, max_rounds=scfg.dynamic_filtering_max_rounds,
                        enabled=grpo and scfg.dynamic_filtering, multiplier=scfg.batch_multiplier)
    all_rewards = torch.cat([r for _, _, r in rounds])
    all_finished = torch.cat([ro.finished_B for _, ro, _ in rounds])
    metrics = {"step": step, "reward_mean": all_rewards.mean().item(), "kept_groups": len(fill.selected),
               "target_groups": fill.target, "shortfall": fill.shortfall, "gen_rounds": fill.rounds,
               "sampled_groups": fill.sampled_groups, "overlong_frac": 1 - all_finished.float().mean().item(),
               "response_tokens_mean": torch.cat([ro.mask_BS.sum(1) for _, ro, _ in rounds]).mean().item()}
    by_dom = defaultdict(list)
    for (records, _, rewards_B) in rounds:
        for r, x in zip(records, rewards_B.tolist()):
            by_dom[r["domain"]].append(x)
    metrics.update({f"reward/{d}": sum(v) / len(v) for d, v in by_dom.items()})
    if scfg.reward == "pairwise_judge":  # the group reward's mean is fixed by construction: log one that moves
        from recipe.rewards.group_reward import absolute_judge_scores
        judged = [absolute_judge_scores(recs, ro.texts, scfg.judge) for recs, ro, _ in rounds]
        if all(j is not None for j in judged):
            flat = [x for j in judged for x in j]
            metrics["judge_score_mean"] = sum(flat) / len(flat)
    if episode_stats:
        from recipe.train.agentic_rollouts import episode_metrics
        metrics.update(episode_metrics(episode_stats))
    lr = lr_at(step, scfg, scfg.steps)
    metrics["lr"] = lr

    # the kept groups, whole (every response of a kept group, truncated ones included: they enter mean/std)
    rows_by_round: dict[int, list[int]] = defaultdict(list)
    for rnd, g in fill.selected:
        rows_by_round[rnd].extend(range(g * G, (g + 1) * G))
    parts = [(rnd, rows) for rnd, rows in sorted(rows_by_round.items())]
    if parts:
        ro = concat_rollouts([_select_rows(rounds[rnd][1], rows) for rnd, rows in parts], tok.pad_token_id)
        records = [rounds[rnd][0][i] for rnd, rows in parts for i in rows]
        rewards_B = torch.cat([rounds[rnd][2][rows] for rnd, rows in parts])
        mask_BS = rules.overlong_loss_mask(ro.mask_BS, ro.finished_B) if scfg.overlong_filtering else ro.mask_BS
        keep_P = torch.ones(len(fill.selected), dtype=torch.bool)
        idx = rules.trainable_rows(keep_P, G, mask_BS)
    else:
        idx = torch.zeros(0, dtype=torch.long)
    metrics["gen_time_s"] = t_gen
    if len(idx) == 0:  # nothing left to train: log the step, leave the weights as they are
        metrics.update(updated=False, time_s=time.perf_counter() - t0)
        return metrics

    group_B = torch.arange(len(fill.selected)).repeat_interleave(G)
    for g in opt.param_groups:
        g["lr"] = lr
    estimator = get_estimator(scfg.advantage_estimator)
    model.train()
    if grpo:
        # advantages over whole groups (overlong responses included), then restricted to the trainable rows
        adv_B = estimator.compute_advantage(AdvantageInputs(rewards_B=rewards_B, group_ids_B=group_B,
                                                            mask_BS=torch.ones(len(rewards_B), 1)))[:, 0]
    ids, attn, m_BS, inf_BS = trim_columns([ro.input_ids_BS[idx], ro.attention_mask_BS[idx], mask_BS[idx],
                                           ro.inf_logprobs_BS[idx]], ro.attention_mask_BS[idx])
    run = ctx.cfg.run
    if grpo:
        if scfg.kl_coef > 0 and ref_model is None:
            raise ValueError(f"{ctx.stage}: kl_coef={scfg.kl_coef} needs a reference model")
        lm = policy_gradient(model, scfg, ids, attn, m_BS, inf_BS, adv_B=adv_B[idx], ref_model=ref_model,
                             micro_batch=run.train_micro_batch_size, logprob_batch=run.logprob_batch_size)
    else:
        assert isinstance(scfg, MOPDConfig)
        lm = policy_gradient(model, scfg, ids, attn, m_BS, inf_BS, domains_B=[records[i]["domain"] for i in idx.tolist()],
                             teachers=teachers, micro_batch=run.train_micro_batch_size,
                             logprob_batch=run.logprob_batch_size)
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), scfg.grad_clip)
    opt.step()
    opt.zero_grad(set_to_none=True)
    model.eval()
    metrics.update(rules.opd_domain_means(lm))
    metrics.update(updated=True, grad_norm=float(gn), trained_responses=len(idx),
                   time_s=time.perf_counter() - t0)
    return metrics


def train_rl(ctx: StageContext, scfg: RLStageConfig, *, teachers: dict | None = None, ref_model=None) -> dict:
    if scfg.advantage_estimator == "opd" and not teachers:
        raise ValueError(f"{ctx.stage}: the opd estimator needs teachers (one per domain)")
    opt = adamw(ctx.model.parameters(), scfg, ctx.cfg.run.fused_optimizer)
    pools, filtered = rl_prompt_pools(ctx, scfg), None
    if scfg.hard_prompt_filter_samples:  # with the input checkpoint, before a resumed state is loaded
        from recipe.train.prompt_filter import drop_solved_prompts
        pools, filtered = drop_solved_prompts(ctx, scfg, pools)
    start = resume_step(ctx.state_dir, ctx.model, opt, ctx.stage, scfg.steps)
    ctx.run.truncate_metrics(ctx.stage, start)
    bar = progress_bar(scfg.steps, start, ctx.stage, ctx.progress)
    clock = SaveClock(scfg.save_every, ctx.cfg.run.state_save_every_s)
    for step in range(start, scfg.steps):
        m = rl_step(ctx, scfg, opt, step, pools, teachers=teachers, ref_model=ref_model)
        ctx.run.append_metrics(ctx.stage, m)
        bar.update(1)
        bar.set_postfix(reward=f"{m['reward_mean']:.2f}", at_cap=f"{m['overlong_frac']:.0%}")
        if scfg.teacher_candidate_every and (step + 1) % scfg.teacher_candidate_every == 0 and step + 1 < scfg.steps:
            save_checkpoint(ctx.model, ctx.tokenizer, candidate_dir(ctx.run, ctx.stage, step + 1))
        if clock.due(step + 1, scfg.steps):
            save_state(ctx.state_dir, ctx.model, opt, step + 1)
            clock.saved()
    bar.close()
    rows = ctx.run.read_metrics(ctx.stage)
    out = {"steps": scfg.steps, "final_reward_mean": rows[-1]["reward_mean"] if rows else None,
           "updates": sum(1 for r in rows if r.get("updated"))}
    if filtered is not None:
        out["hard_prompt_filter"] = filtered
    return out
