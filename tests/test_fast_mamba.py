"""The per-instance fast Mamba-2 scan equals Hugging Face's PyTorch reference: values, gradients, cache states."""
from __future__ import annotations

import copy

import pytest
import torch
from transformers import NemotronHConfig, NemotronHForCausalLM
from transformers.models.nemotron_h import modeling_nemotron_h as nh

from recipe.model.fast_mamba import FastMamba2Mixer, ssd_scan, use_fast_mamba


@pytest.mark.parametrize("S,chunk,with_init", [(1, 8, False), (7, 8, False), (8, 8, True), (13, 8, True),
                                               (37, 8, False), (40, 16, True)])
def test_ssd_scan_equals_reference_scan(S, chunk, with_init):
    torch.manual_seed(S)
    b, h, p, g, n = 3, 4, 5, 2, 6
    x = torch.randn(b, S, h, p, requires_grad=True)
    dt = torch.randn(b, S, h, requires_grad=True)
    A = -torch.rand(h) * 2 - 0.1
    B = torch.randn(b, S, g, n, requires_grad=True)
    C = torch.randn(b, S, g, n, requires_grad=True)
    D, bias = torch.randn(h), torch.randn(h)
    init = torch.randn(b, h, p, n) if with_init else None
    ref_y, ref_s = nh.mamba2_chunk_scan(x, dt, A, B, C, chunk, D=D, dt_bias=bias, initial_states=init,
                                        dt_softplus=True, return_final_states=True)
    y, s = ssd_scan(x, dt, A, B, C, chunk, D=D, dt_bias=bias, initial_states=init, return_final_states=True)
    assert torch.allclose(y, ref_y, atol=1e-4, rtol=1e-4) and torch.allclose(s, ref_s, atol=1e-4, rtol=1e-4)
    w = torch.randn_like(y)
    g_ref = torch.autograd.grad((ref_y * w).sum() + ref_s.sum(), (x, dt, B, C))
    g_new = torch.autograd.grad((y * w).sum() + s.sum(), (x, dt, B, C))
    for a, c in zip(g_ref, g_new):
        assert torch.allclose(a, c, atol=1e-3, rtol=1e-3)


def _model():
    torch.manual_seed(0)
    cfg = NemotronHConfig(vocab_size=60, hidden_size=32, hybrid_override_pattern="ME*M", num_attention_heads=2,
                          num_key_value_heads=1, head_dim=16, mamba_num_heads=4, mamba_head_dim=8, ssm_state_size=8,
                          n_groups=2, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                          moe_shared_expert_intermediate_size=16, use_mamba_kernels=False, chunk_size=8)
    model = NemotronHForCausalLM(cfg)
    with torch.no_grad():  # larger mixer weights than the init, so the Mamba path dominates the logits
        for m in model.modules():
            if isinstance(m, nh.NemotronHMamba2Mixer):
                m.out_proj.weight.mul_(20)
                m.dt_bias.normal_()
    return model


def test_fast_model_matches_reference_model_in_training_and_generation():
    ref = _model()
    fast = copy.deepcopy(ref)
    use_fast_mamba(fast)
    mixers = [m for m in fast.modules() if isinstance(m, nh.NemotronHMamba2Mixer)]
    assert mixers and all(type(m) is FastMamba2Mixer for m in mixers)
    assert not any(type(m) is FastMamba2Mixer for m in ref.modules())  # the swap is per instance
    ids = torch.randint(1, 60, (3, 21))
    attn = torch.ones_like(ids)
    attn[1, :6] = 0  # left padding
    a = ref(input_ids=ids, attention_mask=attn).logits
    b = fast(input_ids=ids, attention_mask=attn).logits
    assert (a - ref(input_ids=ids).logits).abs().max() > 1e-3  # the mask matters, so this compares real work
    assert torch.allclose(a, b, atol=1e-4)
    a.pow(2).mean().backward()
    b.pow(2).mean().backward()
    for (name, p), q in zip(ref.named_parameters(), fast.parameters()):
        if p.grad is not None:
            assert torch.allclose(p.grad, q.grad, atol=1e-5, rtol=1e-3), name
    with torch.no_grad():
        ga = ref.generate(input_ids=ids, attention_mask=attn, max_new_tokens=12, do_sample=False, pad_token_id=0)
        gb = fast.generate(input_ids=ids, attention_mask=attn, max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert torch.equal(ga, gb)
