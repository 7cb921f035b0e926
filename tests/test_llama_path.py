"""A Llama-architecture model (SmolLM2's family) through the trainers' own code: generation by the lean Llama decode
step equals Hugging Face's cached forward (logits per step after a bucketed prefill, greedy tokens); log-probs with prefix sharing equal a plain forward;
one GRPO step and one MOPD step on a fixed batch move the parameters and lower that batch's loss; the step state
(tied embeddings included) round-trips. The model is a small Llama built offline with the project's tokenizer
trainer, so this runs everywhere."""
from __future__ import annotations

import copy

import pytest
import torch

from _tiny_llama import tiny_llama
from recipe.model.chat_render import apply_template
from recipe.model.decode import supports_lean_decode
from recipe.model.decode.llama import CPU_ATTENTION_PATHS, LlamaDecodeState, cpu_attention_path
from recipe.train.advantages import AdvantageInputs, get_estimator
from recipe.train.device import autocast
from recipe.train.losses import grpo_loss, mopd_loss
from recipe.train.rollout import HFDecodeState, generate, prefill_in_buckets, sequence_logprobs
from recipe.train.state import load_state, save_state


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])  # CUDA: bf16 autocast, fp32 weights


@pytest.fixture(scope="module", params=DEVICES)
def llama(request):
    return tiny_llama(request.param)


def _atol(model) -> float:
    """fp32 on CPU; on CUDA the forward runs under bf16 autocast (8 mantissa bits), so log-probs agree to ~1e-2."""
    return 1e-4 if next(model.parameters()).device.type == "cpu" else 3e-2


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _prompts(tok, n: int, group: int) -> list[str]:
    return [apply_template(tok, [{"role": "user", "content": f"Add {i} and {i + 1}."}], add_generation_prompt=True)
            for i in range(n) for _ in range(group)]


@pytest.mark.parametrize("lean", [True, False], ids=["lean-step", "hf-cached-forward"])
def test_generation_matches_hf_greedy(llama, lean):
    model, tok = llama
    assert supports_lean_decode(model)
    prompt = _prompts(tok, 1, 1)
    ro = generate(model, tok, prompt, max_new_tokens=10, temperature=1.0, top_p=1.0, greedy=True, lean_decode=lean)
    ids = tok(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
    dev = next(model.parameters()).device
    with autocast(dev):  # the precision our generate uses on that device
        hf = model.generate(ids.to(dev), max_new_tokens=10, do_sample=False, eos_token_id=tok.eos_token_id,
                            pad_token_id=tok.pad_token_id)[0, ids.shape[1]:].cpu()
    ours = ro.input_ids_BS[0, ids.shape[1]:][ro.mask_BS[0, ids.shape[1]:].bool()]
    assert ours.tolist() == hf[: len(ours)].tolist() and len(ours) > 0


def _ragged_prompts(tok) -> list[str]:
    return [apply_template(tok, [{"role": "user", "content": "Add " + " and ".join(map(str, range(n))) + "."}],
                           add_generation_prompt=True) for n in (2, 9, 4, 2, 6)]


@pytest.mark.parametrize("cpu_attention", CPU_ATTENTION_PATHS)
def test_lean_llama_step_equals_hf_cached_forward_after_bucketed_prefill_and_row_changes(llama, cpu_attention,
                                                                                         monkeypatch):
    """LlamaDecodeState, prefilled in separate length buckets (each row keeps its own RoPE position), gives HF's
    logits at every step of one padded cached forward, also after rows are dropped and repeated (select); on the
    CPU through either attention path (``cpu_attention_path`` picks one per machine)."""
    monkeypatch.setenv("RECIPE_CPU_ATTENTION", cpu_attention)
    model, tok = llama
    dev = next(model.parameters()).device
    enc = tok(_ragged_prompts(tok), return_tensors="pt", padding=True, add_special_tokens=False).to(dev)
    assert len(set(enc["attention_mask"].sum(1).tolist())) >= 3
    with torch.no_grad(), autocast(dev):
        lean, lean_logits = prefill_in_buckets(model, enc["input_ids"], enc["attention_mask"], 6, overhead_tokens=0)
        assert isinstance(lean, LlamaDecodeState) and len(set(lean.row_pos_A.tolist())) >= 3  # several buckets
        ref, ref_logits = HFDecodeState.prefill(model, enc["input_ids"], enc["attention_mask"], 6)
        assert torch.allclose(lean_logits, ref_logits, atol=_atol(model))
        tok_A = ref_logits.argmax(-1)
        for t in range(6):
            if t == 2:  # drop rows 1 and 3, repeat row 0
                keep = torch.tensor([0, 0, 2, 4], device=dev)
                lean.select(keep)
                ref.select(keep)
                tok_A = tok_A[keep]
            ours, theirs = lean.step(tok_A), ref.step(tok_A)
            assert ours.shape == theirs.shape
            assert torch.allclose(ours, theirs, atol=_atol(model)), (t, (ours - theirs).abs().max())
            tok_A = torch.multinomial(torch.softmax(theirs, -1), 1).squeeze(-1)
        with pytest.raises(RuntimeError, match="more steps"):
            lean.step(tok_A)


def test_cpu_attention_path_is_timed_once_and_can_be_fixed(monkeypatch):
    from recipe.model.decode import llama as lean_llama
    monkeypatch.delenv("RECIPE_CPU_ATTENTION", raising=False)
    monkeypatch.setattr(lean_llama, "_cpu_attention_timed", {})
    monkeypatch.setattr(lean_llama, "_cpu_attention_choice", {})
    q, K = torch.zeros(2, 3, 3, 8), torch.zeros(2, 3, 5, 8)
    first = cpu_attention_path(q, K)
    assert first in CPU_ATTENTION_PATHS and list(lean_llama._cpu_attention_choice.values()) == [first]
    (times,) = lean_llama._cpu_attention_timed.values()
    assert set(times) == set(CPU_ATTENTION_PATHS) and first == min(times, key=times.get)
    monkeypatch.setattr(lean_llama, "_time_cpu_attention", lambda *a, **k: pytest.fail("timed twice"))
    assert cpu_attention_path(q, K) == first                        # the same heads and dtype: the first choice
    monkeypatch.setenv("RECIPE_CPU_ATTENTION", "matmul")
    assert cpu_attention_path(q, K) == "matmul"
    monkeypatch.setenv("RECIPE_CPU_ATTENTION", "flash")
    with pytest.raises(ValueError, match="RECIPE_CPU_ATTENTION='flash'"):
        cpu_attention_path(q, K)


def test_cpu_kv_dtype_is_the_faster_timed_one_and_can_be_fixed(monkeypatch, tmp_path):
    from recipe.model.decode import llama as lean_llama
    monkeypatch.delenv("RECIPE_CPU_KV_DTYPE", raising=False)
    monkeypatch.delenv("RECIPE_CPU_ATTENTION", raising=False)
    monkeypatch.setenv("RECIPE_MACHINE_CACHE", str(tmp_path / "a"))
    monkeypatch.setattr(lean_llama, "_kv_dtype_chosen", {})
    fake = {torch.bfloat16: {"sdpa": 3.0, "matmul": 2.0}, torch.float32: {"sdpa": 1.5, "matmul": 4.0}}
    monkeypatch.setattr(lean_llama, "_cpu_attention_timed", {})
    monkeypatch.setattr(lean_llama, "_time_cpu_attention", lambda kvh, rep, d, dtype: fake[dtype])
    assert lean_llama.cpu_kv_dtype(3, 3, 8) == torch.float32           # fp32's best path (1.5) beats bf16's (2.0)
    fake[torch.bfloat16]["matmul"] = 1.0
    monkeypatch.setattr(lean_llama, "_cpu_attention_timed", {})       # a later process on the same machine:
    monkeypatch.setattr(lean_llama, "_kv_dtype_chosen", {})
    assert lean_llama.cpu_kv_dtype(3, 3, 8) == torch.float32           # the stored choice, though bf16 now times faster
    assert lean_llama.cpu_kv_dtype(3, 3, 16) == torch.bfloat16         # other heads: timed and stored apart
    monkeypatch.setenv("RECIPE_MACHINE_CACHE", str(tmp_path / "b"))    # another machine's store (none yet): timed
    assert lean_llama.cpu_kv_dtype(3, 3, 8) == torch.bfloat16
    monkeypatch.setenv("RECIPE_CPU_KV_DTYPE", "float32")
    assert lean_llama.cpu_kv_dtype(3, 3, 8) == torch.float32
    monkeypatch.setenv("RECIPE_CPU_KV_DTYPE", "fp8")
    with pytest.raises(ValueError, match="RECIPE_CPU_KV_DTYPE='fp8'"):
        lean_llama.cpu_kv_dtype(3, 3, 8)


@pytest.mark.parametrize("cpu_attention", CPU_ATTENTION_PATHS)
def test_cpu_bf16_decode_with_an_fp32_kv_cache_keeps_fp32_keys_and_matches_the_bf16_cache(llama, cpu_attention,
                                                                                        monkeypatch):
    """Under CPU bf16 autocast the lean step keeps K/V in the dtype ``cpu_kv_dtype`` picks; an fp32 cache attends
    with autocast off. Its logits agree with the bf16 cache's to bf16 rounding and with the fp32 forward closer."""
    model, tok = llama
    if next(model.parameters()).device.type != "cpu":
        pytest.skip("the K/V dtype choice is the CPU's")
    monkeypatch.setenv("RECIPE_CPU_ATTENTION", cpu_attention)
    enc = tok(_ragged_prompts(tok), return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        ref, ref_logits = HFDecodeState.prefill(model, enc["input_ids"], enc["attention_mask"], 5)   # fp32
        tok_A = ref_logits.argmax(-1)
        ref_steps = []
        for _ in range(5):
            ref_steps.append(ref.step(tok_A))
            tok_A = ref_steps[-1].argmax(-1)
        steps = {}
        for kv in ("float32", "bfloat16"):
            monkeypatch.setenv("RECIPE_CPU_KV_DTYPE", kv)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                lean, logits = prefill_in_buckets(model, enc["input_ids"], enc["attention_mask"], 5, overhead_tokens=0)
                assert {K.dtype for K in lean.keys.values()} == {getattr(torch, kv)}
                tok_A = ref_logits.argmax(-1)
                steps[kv] = []
                for r in ref_steps:
                    steps[kv].append(lean.step(tok_A).float())
                    tok_A = r.argmax(-1)
    err = {kv: max((s - r).abs().max().item() for s, r in zip(steps[kv], ref_steps)) for kv in steps}
    scale = max(r.abs().max().item() for r in ref_steps)
    assert err["bfloat16"] < 0.05 * scale and err["float32"] < 0.05 * scale, (err, scale)
    assert max((a - b).abs().max().item() for a, b in zip(steps["float32"], steps["bfloat16"])) > 0  # two caches


def test_lean_and_hf_decoding_sample_the_same_rows(llama):
    model, tok = llama
    if next(model.parameters()).device.type == "cuda":
        pytest.skip("under bf16 autocast the two paths round differently (the lean step keeps K/V in bf16, HF keeps "
                    "RoPE'd keys in fp32) and a sampled token can flip; the per-step logits test covers CUDA")
    runs = []
    for lean in (True, False):
        torch.manual_seed(3)
        runs.append(generate(model, tok, _ragged_prompts(tok) * 3, max_new_tokens=12, temperature=1.0, top_p=0.9,
                             lean_decode=lean))
    a, b = runs
    assert torch.equal(a.input_ids_BS, b.input_ids_BS)
    assert torch.allclose(a.inf_logprobs_BS, b.inf_logprobs_BS, atol=_atol(llama[0]))


def test_logprobs_with_shared_prefixes_equal_a_plain_forward(llama):
    model, tok = llama
    torch.manual_seed(1)
    ro = generate(model, tok, _prompts(tok, 2, 3), max_new_tokens=8, temperature=1.0, top_p=1.0)
    shared = sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
    dev = next(model.parameters()).device
    with autocast(dev):  # the plain forward at the precision the trainers use on that device
        plain = sequence_logprobs(model, ro.input_ids_BS.to(dev), ro.attention_mask_BS.to(dev)).cpu() * ro.mask_BS
    assert torch.allclose(shared, plain, atol=_atol(model))
    # the sampler's own log-probs (pi_inf at T=1) are the policy's
    assert torch.allclose(ro.inf_logprobs_BS * ro.mask_BS, plain, atol=_atol(model))


def _batch(model, tok, seed: int):
    torch.manual_seed(seed)
    return generate(model, tok, _prompts(tok, 2, 4), max_new_tokens=8, temperature=1.0, top_p=1.0)


def _params(model) -> dict:
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def test_mopd_teacher_term_uses_whole_distributions_at_the_response_tokens(llama):
    # sequence_logprobs(dists=True) in length buckets = one padded forward's log-softmax at the response tokens;
    # policy_loss with mopd.forward_kl_coef adds coef x the per-sequence mean of KL(teacher || student) over them
    from recipe.config import load_config
    from recipe.train.losses import masked_mean
    from recipe.train.rl import policy_loss
    from recipe.train.rl_rules import teacher_rows
    model, tok = llama
    teacher = copy.deepcopy(model).eval()
    with torch.no_grad():
        teacher.lm_head.weight.mul_(3.0)
    ro = _batch(model, tok, 3)
    ids, attn, m = ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS
    r, c = m.bool().nonzero(as_tuple=True)

    def padded(net):
        with torch.no_grad(), autocast(next(net.parameters()).device):
            logits = net(input_ids=ids, attention_mask=attn, use_cache=False).logits.float()
        return torch.log_softmax(logits[r.to(logits.device), (c - 1).to(logits.device)], -1).cpu()

    with torch.no_grad():
        lp_BS, s_NV = sequence_logprobs(model, ids, attn, m, dists=True)
    assert torch.allclose(s_NV.cpu(), padded(model), atol=_atol(model))
    assert torch.allclose(s_NV.cpu().gather(-1, ids[r, c][:, None]).squeeze(-1), lp_BS.cpu()[r, c], atol=1e-6)

    domains = ["mcqa"] * ids.shape[0]
    routed = teacher_rows(domains, {"mcqa": teacher})
    plain = load_config("tiny", ["mopd.forward_kl_coef=0"]).mopd
    with_term = load_config("tiny", ["mopd.forward_kl_coef=0.5"]).mopd
    args = (model, plain, ids, attn, m, ro.inf_logprobs_BS)
    base, _ = policy_loss(*args, teacher_rows=routed)
    total, metrics = policy_loss(model, with_term, ids, attn, m, ro.inf_logprobs_BS, teacher_rows=routed)
    t_NV, s_NV = padded(teacher), padded(model)
    kl_BS = torch.zeros(m.shape)
    kl_BS[r, c] = (t_NV.exp() * (t_NV - s_NV)).sum(-1)
    expected = masked_mean(kl_BS, m)
    assert metrics["forward_kl"] == pytest.approx(float(expected), rel=1e-3, abs=_atol(model))
    assert float((total - base).detach()) == pytest.approx(0.5 * float(expected), rel=1e-3, abs=_atol(model))


def test_one_grpo_step_moves_parameters_and_lowers_the_batch_loss(llama):
    model = copy.deepcopy(llama[0])
    tok = llama[1]
    ro = _batch(model, tok, 2)
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    adv_B = get_estimator("grpo").compute_advantage(AdvantageInputs(
        rewards_B=rewards, group_ids_B=torch.arange(2).repeat_interleave(4), mask_BS=torch.ones(8, 1)))[:, 0]
    adv_BS = adv_B[:, None] * ro.mask_BS
    ref = copy.deepcopy(model).eval()

    def loss():
        lp = sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
        with torch.no_grad():
            ref_lp = sequence_logprobs(ref, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
        return grpo_loss(lp, adv_BS, ro.mask_BS, ref_logprobs_BS=ref_lp, kl_coef=0.03)[0]

    before, p0 = loss(), _params(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.0)
    model.train()
    before.backward()
    opt.step()
    model.eval()
    moved = [n for n, p in model.named_parameters() if not torch.equal(p, p0[n])]
    assert "model.embed_tokens.weight" in moved and any("layers.1" in n for n in moved)
    with torch.no_grad():
        after = loss()
    assert after.item() < before.item()


def test_one_mopd_step_moves_parameters_and_lowers_the_reverse_kl_on_the_batch(llama):
    model = copy.deepcopy(llama[0])
    tok = llama[1]
    teacher = copy.deepcopy(model).eval()
    with torch.no_grad():
        teacher.lm_head.weight.mul_(3.0)  # a sharper teacher (tied: the embeddings scale too)
    ro = _batch(model, tok, 3)
    with torch.no_grad():
        teacher_lp = sequence_logprobs(teacher, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
    opd = get_estimator("opd")

    def loss():
        lp = sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
        adv = opd.compute_advantage(AdvantageInputs(rewards_B=None, group_ids_B=None, mask_BS=ro.mask_BS,
                                                    train_logprobs_BS=lp, teacher_logprobs_BS=teacher_lp))
        return mopd_loss(lp, ro.inf_logprobs_BS, adv, ro.mask_BS)

    before, m0 = loss()
    assert m0["masked_frac"] == 0.0  # on-policy: every ratio is 1
    p0 = _params(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    before.backward()
    opt.step()
    model.eval()
    assert any(not torch.equal(p, p0[n]) for n, p in model.named_parameters())
    with torch.no_grad():
        _, m1 = loss()
    assert m1["reverse_kl"] < m0["reverse_kl"]


@pytest.mark.parametrize("estimator", ["grpo", "opd"])
def test_the_update_loss_is_built_on_the_policy_device_and_equals_the_host_built_one(llama, estimator):
    """recipe.train.rl.policy_loss (the RL update's loss) keeps its log-probs on the model's device: on CUDA no
    device -> host copy until the metrics are read. Its value equals the loss built from CPU log-probs."""
    from types import SimpleNamespace

    from recipe.train.rl import policy_loss
    model, tok = copy.deepcopy(llama[0]), llama[1]
    ro = _batch(model, tok, 2)
    scfg = SimpleNamespace(advantage_estimator=estimator, temperature=0.8, kl_coef=0.03, importance_mask_low=0.5,
                           importance_mask_high=2.0, loss_normalization="per_sequence")
    ids, attn, m_BS, inf_BS = ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS, ro.inf_logprobs_BS
    ref = copy.deepcopy(model).eval()
    sharp = copy.deepcopy(model).eval()
    with torch.no_grad():
        sharp.lm_head.weight.mul_(2.0)
    adv_B = torch.tensor([1.0, -1.0, 0.5, -0.5, 1.0, -1.0, 0.0, 0.0])
    rows = [(ref, [0, 2, 4, 6]), (sharp, [1, 3, 5, 7])]
    model.train()
    loss, metrics = policy_loss(model, scfg, ids, attn, m_BS, inf_BS, adv_B=adv_B, ref_model=ref, teacher_rows=rows)
    dev = next(model.parameters()).device
    assert loss.device.type == dev.type and set(metrics) >= {"loss"}
    lp = sequence_logprobs(model, ids, attn, m_BS, 0.8)            # on the CPU, as before
    with torch.no_grad():
        if estimator == "grpo":
            host = grpo_loss(lp, adv_B[:, None] * m_BS, m_BS, kl_coef=0.03,
                             ref_logprobs_BS=sequence_logprobs(ref, ids, attn, m_BS, 0.8))[0]
        else:
            teacher = torch.zeros_like(lp)
            for t, r in rows:
                teacher[r] = sequence_logprobs(t, ids[r], attn[r], m_BS[r], 0.8)
            host = mopd_loss(lp, inf_BS, (teacher - lp) * m_BS, m_BS)[0]
    assert loss.item() == pytest.approx(host.item(), abs=_atol(model))
    loss.backward()
    assert all(p.grad is None or p.grad.device.type == dev.type for p in model.parameters())
    assert model.model.embed_tokens.weight.grad is not None


def test_step_state_round_trips_a_model_with_tied_embeddings(llama, tmp_path):
    model = copy.deepcopy(llama[0])
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    ro = _batch(model, llama[1], 4)
    sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS).sum().backward()
    opt.step()
    save_state(tmp_path / "state", model, opt, 1)
    fresh = copy.deepcopy(llama[0])
    fresh_opt = torch.optim.AdamW(fresh.parameters(), lr=1e-2)
    assert load_state(tmp_path / "state", fresh, fresh_opt) == 1
    assert all(torch.equal(p, dict(model.named_parameters())[n]) for n, p in fresh.named_parameters())
    assert fresh.lm_head.weight.data_ptr() == fresh.model.embed_tokens.weight.data_ptr()  # still tied
