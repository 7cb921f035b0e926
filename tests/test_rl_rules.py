"""The RL step's rules (recipe/train/rl_rules.py) on hand-built batches; expected values worked out in comments."""
from __future__ import annotations

import pytest
import torch

from recipe.train import rl_rules as rules
from recipe.train.advantages import AdvantageInputs, get_estimator
from recipe.train.rl import concat_rollouts
from recipe.train.rollout import RolloutBatch


def test_unfinished_response_gets_reward_zero():
    rewards = torch.tensor([1.0, 0.5, 1.0, 0.0])
    finished = torch.tensor([True, False, False, True])
    # rows 1 and 2 did not finish: their rewards (0.5, 1.0) become 0; finished rows keep theirs
    assert rules.unfinished_reward_zero(rewards, finished).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_dynamic_filtering_drops_equal_reward_groups():
    r_PG = torch.tensor([[1.0, 1.0, 1.0],    # all correct: std 0 -> dropped
                         [0.0, 1.0, 0.0],    # mixed -> kept
                         [0.0, 0.0, 0.0],    # all wrong: std 0 -> dropped
                         [0.2, 0.2, 0.3]])   # mixed (tiny spread) -> kept
    assert rules.keep_groups(r_PG, dynamic_filtering=True).tolist() == [False, True, False, True]
    assert rules.keep_groups(r_PG, dynamic_filtering=False).tolist() == [True] * 4


def test_swe_agentless_prompt_mask_drops_groups_whose_best_is_at_most_half():
    r_PG = torch.tensor([[0.5, 0.2, 0.0],    # best 0.5 <= 0.5 -> masked (the boundary is masked)
                         [0.6, 0.2, 0.0],    # best 0.6 -> kept
                         [0.7, 0.7, 0.7]])   # best 0.7 -> kept without dynamic filtering
    assert rules.keep_groups(r_PG, dynamic_filtering=False, prompt_mask_max_reward=0.5).tolist() == [False, True, True]
    # both rules together: the third group also goes (zero std)
    assert rules.keep_groups(r_PG, dynamic_filtering=True, prompt_mask_max_reward=0.5).tolist() == [False, True, False]


def test_overlong_filtering_masks_loss_but_keeps_group_statistics():
    # one group of 4: rewards 1, 0, 0, 1; response 3 is truncated (reward kept: overlong_reward_zero is off)
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
    finished = torch.tensor([True, True, True, False])
    mask = torch.ones(4, 3)
    loss_mask = rules.overlong_loss_mask(mask, finished)
    assert loss_mask.sum(1).tolist() == [3, 3, 3, 0]
    # advantages over the WHOLE group: mean 0.5, population std 0.5 -> A = +1, -1, -1, +1
    adv = get_estimator("grpo").compute_advantage(AdvantageInputs(rewards, torch.zeros(4, dtype=torch.long),
                                                                  torch.ones(4, 1)))[:, 0]
    assert adv.tolist() == [1.0, -1.0, -1.0, 1.0]
    # the truncated row leaves the loss; the others keep the advantages computed with it in the group.
    # (Had it been dropped before normalising, the group 1,0,0 would give mean 1/3, std 0.471: A_0 = +1.414.)
    rows = rules.trainable_rows(torch.tensor([True]), 4, loss_mask)
    assert rows.tolist() == [0, 1, 2]
    assert adv[rows].tolist() == [1.0, -1.0, -1.0]


def test_nothing_left_to_train():
    # two groups of 2, both filtered out -> no rows; one kept group whose responses are all truncated -> no rows
    assert rules.trainable_rows(torch.tensor([False, False]), 2, torch.ones(4, 3)).numel() == 0
    loss_mask = rules.overlong_loss_mask(torch.ones(2, 3), torch.tensor([False, False]))
    assert rules.trainable_rows(torch.tensor([True]), 2, loss_mask).numel() == 0


def test_refill_keeps_the_batch_full_with_a_cap_and_a_shortfall():
    # target 4 groups. Round 0 draws 4 groups, keeps 2 (groups 1, 3); round 1 draws the shortfall 2, keeps 1
    # (group 0); round 2 draws 1, keeps it -> full after 3 rounds, 7 groups sampled.
    keeps = [[False, True, False, True], [True, False], [True]]
    calls = []

    def draw(rnd, n):
        calls.append((rnd, n))
        return torch.tensor(keeps[rnd])

    res = rules.refill(draw, target=4, max_rounds=5, enabled=True)
    assert calls == [(0, 4), (1, 2), (2, 1)]
    assert res.selected == [(0, 1), (0, 3), (1, 0), (2, 0)]
    assert (res.rounds, res.sampled_groups, res.shortfall) == (3, 7, 0)


def test_refill_cap_leaves_a_logged_shortfall_and_never_overfills():
    # nothing is ever kept: the cap (2 rounds) stops it; shortfall = the whole target
    res = rules.refill(lambda r, n: torch.zeros(n, dtype=torch.bool), target=3, max_rounds=2, enabled=True)
    assert (res.rounds, res.sampled_groups, res.shortfall, res.selected) == (2, 6, 3, [])
    # round 0 keeps 1 of 3, round 1 draws 2 and keeps both -> full, exactly 3 selected
    res = rules.refill(lambda r, n: torch.tensor([True, False, False]) if r == 0 else torch.ones(n, dtype=torch.bool),
                       target=3, max_rounds=4, enabled=True)
    assert res.selected == [(0, 0), (1, 0), (1, 1)] and res.shortfall == 0
    # without dynamic filtering: one round, whatever it keeps
    res = rules.refill(lambda r, n: torch.tensor([True, False, True]), target=3, max_rounds=4, enabled=False)
    assert (res.rounds, res.shortfall) == (1, 1)
    with pytest.raises(ValueError, match="shape"):
        rules.refill(lambda r, n: torch.ones(n + 1, dtype=torch.bool), target=2, max_rounds=2, enabled=True)


def test_refill_batch_multiplier_oversamples_each_round_and_keeps_at_most_the_target():
    calls = []

    def draw(rnd, n, kept_per_round=(2, 5)):
        calls.append((rnd, n))
        return torch.arange(n) < kept_per_round[rnd]

    # round 0 draws ceil(4 * 1.5) = 6 and keeps 2; the refill draws ceil(2 * 1.5) = 3 and keeps all 3, of which 2 fit
    res = rules.refill(draw, target=4, max_rounds=3, enabled=True, multiplier=1.5)
    assert calls == [(0, 6), (1, 3)]
    assert res.selected == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert (res.rounds, res.sampled_groups, res.shortfall) == (2, 9, 0)
    # one round with enough kept groups: no refill, the surplus is dropped in draw order
    calls.clear()
    res = rules.refill(lambda r, n: draw(r, n, (6,)), target=4, max_rounds=1, enabled=True, multiplier=1.5)
    assert calls == [(0, 6)] and res.selected == [(0, 0), (0, 1), (0, 2), (0, 3)]
    # without dynamic filtering the multiplier does nothing: exactly target prompts
    calls.clear()
    rules.refill(draw, target=4, max_rounds=3, enabled=False, multiplier=2.0)
    assert calls == [(0, 4)]
    with pytest.raises(ValueError, match="multiplier"):
        rules.refill(draw, target=4, max_rounds=3, enabled=True, multiplier=0.5)


def test_mopd_routes_each_row_to_its_domain_teacher():
    sft, rlhf_branch, multi = object(), object(), object()
    teachers = {"math": sft, "chat": rlhf_branch, "instruction_following": multi, "mcqa": multi, "tool_call": multi}
    doms = ["mcqa", "math", "chat", "instruction_following", "math", "tool_call"]
    out = rules.teacher_rows(doms, teachers)
    # one forward per distinct teacher; the multi-domain teacher serves IF, MCQA and tool calls together
    assert [(t, rows) for t, rows in out] == [(multi, [0, 3, 5]), (sft, [1, 4]), (rlhf_branch, [2])]
    with pytest.raises(KeyError, match="code"):
        rules.teacher_rows(["code"], teachers)


def test_concat_rollouts_aligns_prompts_and_responses_of_two_rounds():
    # round A: prompt width 2, response width 2; round B: prompt width 3, response width 1 (pad id 0)
    a = RolloutBatch(torch.tensor([[5, 6, 7, 8]]), torch.tensor([[1, 1, 1, 1]]), torch.tensor([[0., 0, 1, 1]]),
                     torch.tensor([[0., 0, -1, -2]]), ["x"], torch.tensor([True]))
    b = RolloutBatch(torch.tensor([[4, 5, 6, 9]]), torch.tensor([[1, 1, 1, 1]]), torch.tensor([[0., 0, 0, 1]]),
                     torch.tensor([[0., 0, 0, -3]]), ["y"], torch.tensor([False]))
    m = concat_rollouts([a, b], pad_id=0)
    # common prompt width 3 (A gets one left pad), common response width 2 (B gets one right pad)
    assert m.input_ids_BS.tolist() == [[0, 5, 6, 7, 8], [4, 5, 6, 9, 0]]
    assert m.attention_mask_BS.tolist() == [[0, 1, 1, 1, 1], [1, 1, 1, 1, 0]]
    assert m.mask_BS.tolist() == [[0, 0, 0, 1, 1], [0, 0, 0, 1, 0]]
    assert m.inf_logprobs_BS.tolist() == [[0, 0, 0, -1, -2], [0, 0, 0, -3, 0]]
    assert m.texts == ["x", "y"] and m.finished_B.tolist() == [True, False]


def test_rl_step_with_nothing_left_to_train_logs_the_shortfall_and_leaves_weights(tmp_path):
    """An untrained model never satisfies an IF prompt: every group has reward 0 everywhere (zero std), dynamic
    filtering drops them all, the refill round (cap 2) finds nothing either -> no update, shortfall = target."""
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, tokenizer_corpus
    from recipe.model import build_tiny
    from recipe.runs import RunDir
    from recipe.train.context import StageContext
    from recipe.train.rl import rl_prompt_pools, rl_step

    cfg = load_config("tiny", ["domains.tiny.train_items=40", "domains.tiny.val_items=4",
                               "domains.tiny.selection_items=4", "if_rl.prompts_per_step=2",
                               "if_rl.generations_per_prompt=2", "if_rl.max_response_tokens=4",
                               "if_rl.dynamic_filtering_max_rounds=2"])
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)
    model, tok = build_tiny(cfg.model, tokenizer_corpus(splits, cfg.domains.names, 40), 0)
    ctx = StageContext(run=RunDir(tmp_path / "r"), stage="if_rl", cfg=cfg, model=model, tokenizer=tok,
                       splits=splits, progress=False)
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1.0)
    m = rl_step(ctx, cfg.if_rl, opt, 0, rl_prompt_pools(ctx, cfg.if_rl))
    assert m["reward_mean"] == 0.0
    assert (m["updated"], m["kept_groups"], m["target_groups"], m["shortfall"]) == (False, 0, 2, 2)
    assert (m["gen_rounds"], m["sampled_groups"]) == (2, 4)   # round 0: 2 prompts, refill round: the missing 2
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_opd_domain_means_per_domain_and_equal_over_micro_batches():
    """Per-domain MOPD figures: reverse KL and the teacher's log-prob per token, the mask's dropped share, the
    advantage on each answer's last token; the sums of two halves give the whole batch's means."""
    from recipe.train.rl_rules import opd_domain_means, opd_domain_sums
    train = torch.tensor([[-1.0, -1.0, -1.0], [-0.5, -0.5, 0.0], [-2.0, -1.0, -3.0]])
    teacher = torch.tensor([[-1.5, -1.0, -4.0], [-0.5, -0.5, 0.0], [-1.0, -1.0, -1.0]])
    inf = torch.tensor([[-1.0, -1.0, -1.0], [-0.5, -2.0, 0.0], [-2.0, -1.0, -3.0]])   # row 1, token 1: ratio e^1.5
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    doms = ["mcqa", "mcqa", "math"]
    whole = opd_domain_means(opd_domain_sums(doms, train, teacher, inf, mask, low=0.5, high=2.0))
    assert whole["reverse_kl/mcqa"] == pytest.approx((0.5 + 0 + 3.0 + 0 + 0) / 5)
    assert whole["reverse_kl/math"] == pytest.approx((-1.0 + 0 - 2.0) / 3)
    assert whole["masked_frac/mcqa"] == pytest.approx(1 / 5) and whole["masked_frac/math"] == 0
    assert whole["last_token_adv/mcqa"] == pytest.approx((-3.0 + 0.0) / 2)   # rows' last trained tokens
    assert whole["teacher_logprob/math"] == pytest.approx(-1.0)
    halves = [opd_domain_sums(doms[i:j], train[i:j], teacher[i:j], inf[i:j], mask[i:j], low=0.5, high=2.0)
              for i, j in ((0, 1), (1, 3))]
    added = {k: halves[0].get(k, 0.0) + halves[1].get(k, 0.0) for k in set(halves[0]) | set(halves[1])}
    assert opd_domain_means(added) == pytest.approx(whole)
