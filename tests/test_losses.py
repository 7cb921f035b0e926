"""Advantages and losses against hand-computed values (B, S = 2, 4 style), including masking and padding."""
from __future__ import annotations

import math

import pytest
import torch

from recipe.train.advantages import AdvantageInputs, get_estimator
from recipe.train.losses import grpo_loss, mopd_loss, sft_loss
from recipe.train.schedule import lr_at


def test_grpo_advantage_group_normalised_and_masked():
    mask = torch.tensor([[0, 1, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.float)
    adv = get_estimator("grpo").compute_advantage(AdvantageInputs(
        rewards_B=torch.tensor([1.0, 0.0, 1.0, 1.0]), group_ids_B=torch.tensor([0, 0, 1, 1]), mask_BS=mask))
    # group 0: mean 0.5, population std 0.5 -> +1, -1; group 1: all equal -> 0
    expected = torch.tensor([[0, 1, 1, 0], [0, -1, -1, -1], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=torch.float)
    assert torch.allclose(adv, expected)


def test_grpo_advantage_four_samples():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0])
    adv = get_estimator("grpo").compute_advantage(AdvantageInputs(
        rewards_B=r, group_ids_B=torch.zeros(4, dtype=torch.long), mask_BS=torch.ones(4, 1)))
    std = math.sqrt(0.25 * 0.75)
    assert adv[:, 0].tolist() == pytest.approx([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std])


def test_grpo_loss_is_token_level_over_the_batch():
    lp = torch.tensor([[0.0, -1.0, -2.0, 0.0], [0.0, -0.5, 0.0, 0.0]], requires_grad=True)
    mask = torch.tensor([[0, 1, 1, 0], [0, 1, 0, 0]], dtype=torch.float)  # 3 response tokens, padding elsewhere
    adv = torch.tensor([[0, 2, 2, 0], [0, -1, 0, 0]], dtype=torch.float)
    loss, m = grpo_loss(lp, adv, mask)
    # -(1/3) * (2*-1 + 2*-2 + -1*-0.5) = -(1/3)(-5.5)
    assert loss.item() == pytest.approx(5.5 / 3)
    loss.backward()
    assert torch.allclose(lp.grad, -adv * mask / 3)  # padded positions get no gradient
    assert "kl" not in m


def test_grpo_kl_term_only_when_set():
    lp = torch.tensor([[-1.0, -1.0]])
    ref = torch.tensor([[-1.0, -2.0]])
    mask = torch.ones(1, 2)
    adv = torch.zeros(1, 2)
    loss, m = grpo_loss(lp, adv, mask, ref_logprobs_BS=ref, kl_coef=0.03)
    k3 = (math.exp(0) - 0 - 1 + math.exp(-1) + 1 - 1) / 2  # exp(ref-lp) - (ref-lp) - 1, token mean
    assert m["kl"] == pytest.approx(k3)
    assert loss.item() == pytest.approx(0.03 * k3)
    with pytest.raises(ValueError):
        grpo_loss(lp, adv, mask, kl_coef=0.03)


def test_opd_advantage_is_detached_teacher_minus_student():
    train = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    teacher = torch.tensor([[-0.5, -3.0]])
    adv = get_estimator("opd").compute_advantage(AdvantageInputs(
        rewards_B=None, group_ids_B=None, mask_BS=torch.tensor([[1.0, 0.0]]), train_logprobs_BS=train,
        teacher_logprobs_BS=teacher))
    assert adv.tolist() == [[0.5, 0.0]] and not adv.requires_grad


def test_opd_discount_charges_a_token_for_the_log_ratios_after_it():
    # log-ratios (teacher - student) 1, -2, 4 on three answer tokens, then padding the mask leaves out
    train = torch.tensor([[-1.0, -1.0, -5.0, -0.3]])
    teacher = torch.tensor([[0.0, -3.0, -1.0, -9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])

    def adv(g):
        return get_estimator("opd").compute_advantage(AdvantageInputs(
            rewards_B=None, group_ids_B=None, mask_BS=mask, train_logprobs_BS=train, teacher_logprobs_BS=teacher,
            discount=g)).tolist()

    assert adv(0.0) == [[1.0, -2.0, 4.0, 0.0]]                       # Eq. 2: each token its own
    assert adv(1.0) == [[3.0, 2.0, 4.0, 0.0]]                        # the whole rest of the answer
    assert adv(0.5) == [[1.0 - 1.0 + 1.0, -2.0 + 2.0, 4.0, 0.0]]     # 1 + 0.5*(-2) + 0.25*4


def test_opd_discount_is_refused_on_the_cluster():
    from recipe.cluster import keymap
    from recipe.config import load_config
    rule = next(r for r in keymap.FIELD_MAP if r.field == "kl_discount")
    assert rule.values(load_config("paper").mopd) == {}
    with pytest.raises(ValueError, match="kl_discount=0.5"):
        rule.values(load_config("paper", ["mopd.kl_discount=0.5"]).mopd)


def test_mopd_loss_importance_mask_and_per_sequence_mean():
    # sequence 0: 3 valid tokens, ratios exp(0)=1, exp(1)=2.72 (masked out), exp(-0.5)=0.61 (kept)
    # sequence 1: 1 valid token + padding, ratio 1
    train = torch.tensor([[-1.0, -1.0, -1.0, 0.0], [-2.0, 0.0, 0.0, 0.0]], requires_grad=True)
    inf = torch.tensor([[-1.0, -2.0, -0.5, 0.0], [-2.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.float)
    adv = torch.tensor([[0.3, 0.4, -0.2, 9.0], [0.1, 9.0, 9.0, 9.0]])
    loss, m = mopd_loss(train, inf, adv, mask, low=0.5, high=2.0, normalization="per_sequence")
    r02 = math.exp(-0.5)
    seq0 = (1 * 0.3 * -1.0 + 0 + r02 * -0.2 * -1.0) / 3
    seq1 = (1 * 0.1 * -2.0) / 1
    assert loss.item() == pytest.approx(-(seq0 + seq1) / 2)
    assert m["masked_frac"] == pytest.approx(1 / 4)
    loss.backward()
    expected_grad = torch.tensor([[-0.3 / 3 / 2, 0.0, -(r02 * -0.2) / 3 / 2, 0.0], [-0.1 / 2, 0, 0, 0]])
    assert torch.allclose(train.grad, expected_grad, atol=1e-6)


def test_mopd_token_level_fallback_and_bad_name():
    train = torch.tensor([[-1.0, -1.0], [-1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    adv = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    loss, _ = mopd_loss(train, train.clone(), adv, mask, normalization="token_level")
    assert loss.item() == pytest.approx(1.0)  # -(−1 −1 −1)/3
    with pytest.raises(ValueError):
        mopd_loss(train, train, adv, mask, normalization="nope")


def test_sft_loss_only_counts_masked_tokens():
    lp = torch.tensor([[-5.0, -1.0, -3.0]])
    loss, m = sft_loss(lp, torch.tensor([[0.0, 1.0, 1.0]]))
    assert loss.item() == pytest.approx(2.0) and m["tokens"] == 2


def test_unknown_estimator_is_rejected():
    with pytest.raises(ValueError, match="unknown advantage estimator"):
        get_estimator("ppo")


def test_lr_schedules():
    from recipe.config import load_config
    mopd = load_config("paper").mopd
    assert lr_at(0, mopd, 52) == pytest.approx(2e-7)
    assert lr_at(15, mopd, 52) == pytest.approx(2e-7 + (2e-6 - 2e-7) * 15 / 30)
    assert lr_at(30, mopd, 52) == pytest.approx(2e-6) and lr_at(51, mopd, 52) == pytest.approx(2e-6)
    sft = load_config("paper").sft
    assert lr_at(200, sft, 40000) == pytest.approx(5e-5)
    assert lr_at(40000, sft, 40000) == pytest.approx(5e-6)


def test_masked_sequence_logprobs_match_full_computation():
    """The response-only LM-head path gives the same log-probs and gradients as the full one."""
    from transformers import NemotronHConfig, NemotronHForCausalLM

    from recipe.train.rollout import sequence_logprobs
    torch.manual_seed(0)
    cfg = NemotronHConfig(vocab_size=50, hidden_size=32, hybrid_override_pattern="ME*", num_attention_heads=2,
                          num_key_value_heads=1, head_dim=16, mamba_num_heads=4, mamba_head_dim=16, ssm_state_size=8,
                          n_groups=1, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                          moe_shared_expert_intermediate_size=16, use_mamba_kernels=False, chunk_size=8)
    model = NemotronHForCausalLM(cfg)
    ids = torch.randint(1, 50, (2, 7))
    attn = torch.ones_like(ids)
    mask = torch.tensor([[0, 0, 0, 1, 1, 1, 0], [0, 0, 1, 1, 1, 1, 1]], dtype=torch.float)
    full = sequence_logprobs(model, ids, attn) * mask
    part = sequence_logprobs(model, ids, attn, mask)
    assert torch.allclose(full, part, atol=1e-5)
    (part.sum()).backward()
    g_part = model.lm_head.weight.grad.clone()
    model.zero_grad()
    (full.sum()).backward()
    assert torch.allclose(g_part, model.lm_head.weight.grad, atol=1e-5)


def test_inverse_cdf_sampler_matches_the_distribution():
    from recipe.train.rollout import sample_inverse_cdf
    torch.manual_seed(0)
    probs = torch.tensor([[0.1, 0.0, 0.6, 0.3]]).repeat(20000, 1)
    draws = sample_inverse_cdf(probs, torch.rand(len(probs)))
    freq = torch.bincount(draws, minlength=4).float() / len(draws)
    assert freq[1] == 0 and torch.allclose(freq, probs[0], atol=0.015)


def _mopd_logit_step(coef: float) -> torch.Tensor:
    """The change MOPD's loss asks of one position's logits when the student writes a token the teacher never
    would and gives the teacher's token almost nothing: tokens 0 = the teacher's ('}' after '\\boxed{D'),
    1 = the student's ('\\n'), 2 = the student's runner-up (a token from another domain, 'return'), 3-5 rest.
    On-policy, the batch holds what the student samples: its own token, every time."""
    from recipe.train.losses import masked_mean, teacher_forward_kl
    teacher_V = torch.log_softmax(torch.tensor([9.0, -2.0, -6.0, -4.0, -4.0, -4.0]), -1)
    z_V = torch.tensor([-6.0, 6.0, 0.0, -2.0, -2.0, -2.0], requires_grad=True)
    lp_V = torch.log_softmax(z_V, -1)
    tok = torch.full((8,), 1)
    train, mask = lp_V[tok][:, None], torch.ones(8, 1)
    adv = get_estimator("opd").compute_advantage(AdvantageInputs(
        rewards_B=None, group_ids_B=None, mask_BS=mask, train_logprobs_BS=train, teacher_logprobs_BS=teacher_V[tok][:, None]))
    loss, _ = mopd_loss(train, train.detach(), adv, mask)
    if coef:
        loss = loss + coef * masked_mean(teacher_forward_kl(lp_V.expand(8, -1), teacher_V.expand(8, -1))[:, None], mask)
    loss.backward()
    return -z_V.grad     # the direction a gradient step moves the logits


def test_mopd_raises_the_teachers_token_where_the_student_never_samples_it():
    # The sampled-token estimator (Eq. 2) alone pushes the student's token down and hands the mass to its own
    # runner-up: 'return' rises ~400x more than '}', which is how MOPD wrote '\boxed{Dreturn x + 9' on an MCQA
    # student whose multi-domain RL had collapsed onto 'B' (docs/EVIDENCE.md). The profile's teacher term raises
    # the teacher's token most.
    from recipe.config import load_config
    paper_step = _mopd_logit_step(0.0)
    assert paper_step[2] > 100 * paper_step[0] > 0
    step = _mopd_logit_step(load_config("tiny").mopd.forward_kl_coef)
    assert int(step.argmax()) == 0 and step[0] > step[2]
