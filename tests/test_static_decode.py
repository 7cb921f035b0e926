"""The static-buffer Llama decode (recipe.model.decode.llama_static: the step a CUDA graph replays on CUDA, run
eagerly here), the device sampler and the loop that checks for finished rows every k tokens, against the eager
lean step and today's sampler. On a CPU the static step is the same Python code the graph captures on CUDA."""
from __future__ import annotations

import math

import pytest
import torch

from _tiny_llama import tiny_llama
from recipe.model.chat_render import apply_template
from recipe.model.decode.checked_loop import decode_checked
from recipe.model.decode.llama_static import StaticLlamaDecode, batch_bucket, length_bucket
from recipe.model.decode.token_sampling import DeviceSampler, sample_inverse_cdf, top_p_filter
from recipe.train.rollout import generate, prefill_in_buckets

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def llama():
    return tiny_llama(max_position_embeddings=512, initializer_range=0.3)


def _prompts(tok, copies: int = 2) -> list[str]:
    return [apply_template(tok, [{"role": "user", "content": "Add " + " and ".join(map(str, range(n))) + "."}],
                           add_generation_prompt=True) for n in (2, 9, 4, 2, 6, 3)] * copies


def _prefill(model, tok, max_new: int):
    enc = tok(_prompts(tok), return_tensors="pt", padding=True, add_special_tokens=False)
    dev = next(model.parameters()).device
    return prefill_in_buckets(model, enc["input_ids"].to(dev), enc["attention_mask"].to(dev), max_new,
                              overhead_tokens=0)


def test_buckets():
    assert [batch_bucket(n) for n in (1, 8, 9, 256, 257, 1500)] == [8, 8, 16, 256, 512, 2048]
    assert [length_bucket(n) for n in (5, 128, 129, 700)] == [128, 128, 256, 1024]


@pytest.fixture(params=["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def on_device(request, llama):
    """The model on CPU (the static step run eagerly) and, where present, on CUDA (its captured graph replayed,
    under bf16 autocast as generate runs it)."""
    import copy
    model, tok = llama
    if request.param == "cpu":
        yield model, tok, 1e-4
        return
    from recipe.train.device import autocast
    with autocast(torch.device("cuda")):
        yield copy.deepcopy(model).cuda(), tok, 3e-2


@torch.no_grad()
def test_static_step_equals_the_eager_step_as_rows_finish_at_different_times(on_device):
    """At every step the static-buffer step's logits equal the eager lean step's for every row still generating,
    while rows leave at three different steps and the batch bucket shrinks from 16 rows to 8."""
    model, tok, atol = on_device
    eager, logits = _prefill(model, tok, 10)
    assert len(set(eager.row_pos_A.tolist())) >= 3            # several prefill buckets joined
    static = StaticLlamaDecode.for_state(eager)
    assert (static.n, static.Ab, static.length) == (12, 16, 128)
    assert static.use_graph == (logits.device.type == "cuda")
    gen = torch.Generator(device=logits.device).manual_seed(1)
    tok_A = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).squeeze(-1)
    leave = {2: [0, 5], 4: [3, 7, 8], 7: [1]}                 # step -> state rows that finish before it
    for t in range(10):
        if t in leave:
            keep = torch.tensor([r for r in range(len(tok_A)) if r not in leave[t]], device=logits.device)
            eager.select(keep)
            static.select(keep)
            tok_A = tok_A[keep]
        ours, ref = static.step(tok_A), eager.step(tok_A)
        assert ours.shape == ref.shape
        assert torch.allclose(ours, ref, atol=atol), (t, (ours - ref).abs().max())
        tok_A = torch.multinomial(torch.softmax(ref, -1), 1, generator=gen).squeeze(-1)
    assert (static.n, static.Ab) == (6, 8)
    assert not static.use_graph or set(static.graphs) == {16, 8}      # one graph per batch bucket used


def _eos_with_spread_finishes(model, tok, max_new: int) -> int:
    """A token that the greedy rows first emit at several different steps (and some rows never): a stand-in eos,
    so that rows finish at different times."""
    state, logits = _prefill(model, tok, max_new)
    sampler = DeviceSampler(len(logits), logits.device, temperature=1.0, top_p=1.0, greedy=True)
    resp, _, _ = decode_checked(state, logits, sampler, max_new_tokens=max_new, eos=-1, pad=tok.pad_token_id,
                                check_every=1)
    best, spread = None, 0
    for cand in resp.unique().tolist():
        hit = resp == cand
        firsts = {int(h.float().argmax()) for h in hit if h.any()}
        if len(firsts) > spread and not bool(hit.any(1).all()):
            best, spread = cand, len(firsts)
    assert spread >= 2
    return best


@torch.no_grad()
def test_greedy_tokens_of_the_static_checked_loop_equal_the_eager_loop(llama):
    model, tok = llama
    eos = _eos_with_spread_finishes(model, tok, 12)
    outs = []
    for static, k in ((False, 1), (True, 4), (True, 5)):
        state, logits = _prefill(model, tok, 12)
        if static:
            state = StaticLlamaDecode.for_state(state)
        sampler = DeviceSampler(len(logits), logits.device, temperature=1.0, top_p=1.0, greedy=True)
        outs.append(decode_checked(state, logits, sampler, max_new_tokens=12, eos=eos, pad=tok.pad_token_id,
                                   check_every=k))
    ref = outs[0]
    assert 0 < int(ref[2].sum()) < len(ref[2])                 # some rows finished, others hit the cap
    for resp, lp, finished in outs[1:]:
        assert torch.equal(resp, ref[0]) and torch.equal(finished, ref[2]) and torch.equal(lp, ref[1])


def test_generate_with_static_decode_equals_the_eager_loop_greedy(llama):
    model, tok = llama
    a = generate(model, tok, _prompts(tok), max_new_tokens=9, temperature=1.0, top_p=1.0, greedy=True,
                 static_decode=False)
    b = generate(model, tok, _prompts(tok), max_new_tokens=9, temperature=1.0, top_p=1.0, greedy=True,
                 static_decode=True, check_every=4)
    for f in ("input_ids_BS", "attention_mask_BS", "mask_BS", "finished_B"):
        assert torch.equal(getattr(a, f), getattr(b, f)), f
    assert a.texts == b.texts


def test_sampled_generate_with_static_decode_repeats_under_a_seed_and_keeps_pi_inf(llama):
    model, tok = llama
    runs = []
    for _ in range(2):
        torch.manual_seed(7)
        runs.append(generate(model, tok, _prompts(tok), max_new_tokens=8, temperature=0.8, top_p=0.9,
                             static_decode=True, check_every=3))
    assert torch.equal(runs[0].input_ids_BS, runs[1].input_ids_BS)
    from recipe.train.rollout import sequence_logprobs
    ro = runs[0]
    with torch.no_grad():
        lp = sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS)
    # pi_inf is the tempered distribution: log p / T renormalised, checked against a plain forward at T = 0.8
    logits = model(input_ids=ro.input_ids_BS, attention_mask=ro.attention_mask_BS).logits[:, :-1].float()
    tempered = torch.log_softmax(logits / 0.8, -1).gather(-1, ro.input_ids_BS[:, 1:, None]).squeeze(-1)
    m = ro.mask_BS[:, 1:].bool()
    assert torch.allclose(ro.inf_logprobs_BS[:, 1:][m], tempered[m], atol=1e-4)
    assert lp.shape == ro.mask_BS.shape


def test_device_sampler_draws_todays_distribution():
    """Seeded, on the CPU: the device sampler and today's sampler (uniforms from the CPU generator) draw the same
    distribution, the tempered top-p one; tokens outside the nucleus never come; log-probs are the tempered ones."""
    logits = torch.tensor([[2.0, 1.5, 1.0, 0.2, -1.0, -3.0]])
    T, top_p, N = 0.7, 0.9, 40_000
    target = torch.softmax(top_p_filter(logits / T, top_p), -1)[0]
    assert int((target == 0).sum()) >= 2
    logits_N = logits.expand(N, -1)
    torch.manual_seed(0)
    sampler = DeviceSampler(N, torch.device("cpu"), temperature=T, top_p=top_p, greedy=False)
    ours, lp = sampler(logits_N, torch.arange(N))
    today = sample_inverse_cdf(torch.softmax(top_p_filter(logits_N / T, top_p), -1), torch.rand(N))
    for draws in (ours, today):
        freq = torch.bincount(draws, minlength=6).double() / N
        for p, f in zip(target.tolist(), freq.tolist()):
            assert abs(f - p) <= 5 * math.sqrt(max(p * (1 - p), 1e-12) / N), (p, f)
    assert torch.allclose(lp, torch.log_softmax(logits / T, -1)[0][ours])
    torch.manual_seed(0)
    again, _ = DeviceSampler(N, torch.device("cpu"), temperature=T, top_p=top_p, greedy=False)(logits_N,
                                                                                               torch.arange(N))
    assert torch.equal(ours, again)
    # a row's draw does not depend on which other rows are active: rows 3 and 10 alone draw what they drew in full
    torch.manual_seed(0)
    part, _ = DeviceSampler(N, torch.device("cpu"), temperature=T, top_p=top_p, greedy=False)(
        logits_N[:2], torch.tensor([3, 10]))
    assert torch.equal(part, ours[[3, 10]])


def test_the_graph_decode_is_the_cuda_default_unless_turned_off(monkeypatch):
    from recipe.train.rollout import static_decode_by_default
    monkeypatch.delenv("RECIPE_STATIC_DECODE", raising=False)
    assert static_decode_by_default(torch.device("cuda")) and not static_decode_by_default(torch.device("cpu"))
    monkeypatch.setenv("RECIPE_STATIC_DECODE", "0")
    assert not static_decode_by_default(torch.device("cuda"))
