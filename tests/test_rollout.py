"""Our cached decoding loop (recipe.train.rollout.generate) against Hugging Face: the same greedy tokens, the same
sampling distribution, log-probs equal to a teacher-forced forward, and nothing process-wide patched."""
from __future__ import annotations

import pytest
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopPLogitsWarper

from recipe.config import load_config
from recipe.domains import build_tiny_splits, tokenizer_corpus
from recipe.model import build_tiny
from recipe.train.rollout import generate, render_prompt, top_p_filter


def assert_same_gradient(got: torch.Tensor, want: torch.Tensor, name: str) -> None:
    """Equal up to float32 summation order: a gradient summed over rows in other groupings (prefix sharing, length
    buckets) differs by ~1e-7 of the tensor's largest entry, so a small entry beside a large one is compared at the
    tensor's scale, not its own (a conv bias with entries of 85 and of 1e-4 failed an elementwise rtol)."""
    scale = want.abs().max().item()
    err = (got - want).abs().max().item()
    assert err <= 1e-5 + 1e-5 * scale, f"{name}: max |diff| {err:.3g} at scale {scale:.3g}"


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = load_config("tiny", ["domains.tiny.train_items=100", "domains.tiny.val_items=10"])
    sp = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)
    model, tok = build_tiny(cfg.model, tokenizer_corpus(sp, list(sp), 100), 0)
    # prompts of different lengths (left padding) and repeated ones (prefix sharing), in mixed order
    recs = [sp["math"]["val"][0], sp["tool_call"]["val"][0], sp["instruction_following"]["val"][1]]
    prompts = [render_prompt(tok, recs[i], True) for i in (0, 1, 0, 2, 1, 0, 2, 2)]
    return model.eval(), tok, prompts


def test_greedy_tokens_equal_hugging_face_generate(tiny):
    model, tok, prompts = tiny
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        hf = model.generate(**enc, max_new_tokens=12, do_sample=False, temperature=None, top_p=None, top_k=None,
                            pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    ours = generate(model, tok, prompts, max_new_tokens=12, temperature=1.0, top_p=1.0, greedy=True)
    assert torch.equal(ours.input_ids_BS, hf)


def test_inference_logprobs_equal_a_teacher_forced_forward(tiny):
    """The cache (shared prompt state, rows leaving the batch as they finish) reproduces the full forward."""
    model, tok, prompts = tiny
    torch.manual_seed(1)
    ro = generate(model, tok, prompts * 4, max_new_tokens=16, temperature=0.8, top_p=1.0)
    tf = torch.log_softmax(model(input_ids=ro.input_ids_BS, attention_mask=ro.attention_mask_BS).logits.float()
                           / 0.8, -1)[:, :-1].gather(-1, ro.input_ids_BS[:, 1:, None]).squeeze(-1)
    m = ro.mask_BS[:, 1:].bool()
    assert m.sum() > 50
    assert torch.allclose(tf[m], ro.inf_logprobs_BS[:, 1:][m], atol=1e-4)
    # rows are padded after <|im_end|>, and the mask ends at it
    eos = tok.eos_token_id
    for b in range(ro.input_ids_BS.shape[0]):
        resp = ro.input_ids_BS[b][ro.mask_BS[b].bool()]
        if ro.finished_B[b]:
            assert resp[-1] == eos and (resp[:-1] != eos).all()
        else:
            assert (resp != eos).all() and len(resp) == 16


def test_top_p_filter_equals_hugging_face_warper():
    torch.manual_seed(0)
    logits = torch.randn(64, 50) * 3
    for p in (0.3, 0.9, 0.99):
        assert torch.equal(top_p_filter(logits, p), TopPLogitsWarper(p)(None, logits.clone()))
    assert top_p_filter(logits, 1.0) is logits


def test_sampling_distribution_equals_hugging_face_processors(tiny):
    """First-token frequencies over many rows match softmax(TopP(Temperature(logits))) as HF samples it."""
    model, tok, prompts = tiny
    T, p, n = 1.5, 0.9, 6000
    enc = tok(prompts[:1], return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        logits = model(**enc).logits[:, -1].float()
    want = torch.softmax(TopPLogitsWarper(p)(None, TemperatureLogitsWarper(T)(None, logits)), -1)[0]
    torch.manual_seed(0)
    ro = generate(model, tok, prompts[:1] * n, max_new_tokens=1, temperature=T, top_p=p)
    first = ro.input_ids_BS[:, -1]
    freq = torch.bincount(first, minlength=want.numel()).float() / n
    assert (freq[want == 0] == 0).all()
    se = (want * (1 - want) / n).sqrt()
    assert ((freq - want).abs() <= 5 * se + 1e-3).all()


def test_generation_patches_nothing_process_wide(tiny, monkeypatch):
    """No swap of torch.multinomial (or anything else) can leak into code running beside a rollout."""
    model, tok, prompts = tiny
    calls = []
    original = torch.multinomial

    def spy(*a, **k):
        calls.append(1)
        return original(*a, **k)

    monkeypatch.setattr(torch, "multinomial", spy)
    generate(model, tok, prompts, max_new_tokens=4, temperature=1.0, top_p=0.9)
    assert torch.multinomial is spy and not calls
    assert torch.multinomial(torch.tensor([[0.0, 1.0]]), 1).item() == 1 and calls


def test_shared_prompt_forward_gives_the_same_logprobs_and_gradients(tiny):
    """Training on a group's samples runs the prompt once per distinct prompt; values and gradients are unchanged."""
    import recipe.train.rollout as rollout
    model, tok, prompts = tiny
    torch.manual_seed(2)
    ro = generate(model, tok, prompts * 2, max_new_tokens=40, temperature=1.0, top_p=1.0)  # > 1 Mamba chunk
    ids, attn, mask = ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS
    calls = []
    inner = model.model.forward

    def counting(*a, **k):
        calls.append(k["input_ids"].shape)
        return inner(*a, **k)

    model.train()
    try:
        model.model.forward = counting
        shared = rollout.sequence_logprobs(model, ids, attn, mask)
        (shared * torch.linspace(0.5, 1.5, shared.shape[1])).sum().backward()
        g_shared = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
        model.model.forward = inner
        logits = model(input_ids=ids, attention_mask=attn).logits.float()
        full = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None]).squeeze(-1) * mask[:, 1:]
        full = torch.cat([torch.zeros_like(full[:, :1]), full], 1)
        (full * torch.linspace(0.5, 1.5, full.shape[1])).sum().backward()
        g_full = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
    finally:
        model.model.forward = inner
        model.eval()
    P = int(mask.bool().any(0).nonzero()[0])
    assert [c[0] for c in calls] == [3, len(ids)] and calls[0][1] == P  # 3 distinct prompts, then every row
    assert torch.allclose(shared, full, atol=1e-5)
    assert g_shared.keys() == g_full.keys()
    for n in g_full:
        assert_same_gradient(g_shared[n], g_full[n], n)


def test_length_buckets_give_the_same_logprobs_and_gradients(tiny, monkeypatch):
    """Rows of very different lengths run in trimmed buckets; values and gradients equal one padded forward."""
    import recipe.train.rollout as rollout
    monkeypatch.setattr(rollout, "_BUCKET_OVERHEAD_TOKENS", 0)  # split even this small batch
    model, tok, prompts = tiny
    torch.manual_seed(3)
    ro = generate(model, tok, prompts * 3, max_new_tokens=12, temperature=1.0, top_p=1.0)
    ids, attn = ro.input_ids_BS, ro.attention_mask_BS
    mask = ro.mask_BS.clone()
    mask[::2] = 0  # a sparse, uneven trained set
    mask[::2, -1] = ro.mask_BS[::2, -1]
    buckets = rollout.length_buckets(ids, attn, mask, max_buckets=3)
    assert len(buckets) > 1 and sorted(torch.cat([r for r, _, _ in buckets]).tolist()) == list(range(len(ids)))
    model.train()
    try:
        out = rollout.sequence_logprobs(model, ids, attn, mask)
        (out * torch.linspace(0.5, 1.5, out.shape[1])).sum().backward()
        g = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
        logits = model(input_ids=ids, attention_mask=attn).logits.float()
        full = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None]).squeeze(-1) * mask[:, 1:]
        full = torch.cat([torch.zeros_like(full[:, :1]), full], 1)
        (full * torch.linspace(0.5, 1.5, full.shape[1])).sum().backward()
        g_full = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
    finally:
        model.eval()
    assert torch.allclose(out, full, atol=1e-5)
    for n in g_full:
        assert_same_gradient(g[n], g_full[n], n)


def test_length_buckets_split_rows_of_different_lengths():
    from recipe.train.rollout import length_buckets
    B, S = 64, 200
    attn = torch.zeros(B, S, dtype=torch.long)
    mask = torch.zeros(B, S)
    for b in range(B):  # half the rows use 30 columns, half 200 (left-padded prompts)
        start = 170 if b % 2 else 0
        attn[b, start:] = 1
        mask[b, 190:] = 1
    ids = torch.arange(B)[:, None].expand(B, S).clone()  # distinct prompts
    parts = length_buckets(ids, attn, mask)
    assert len(parts) >= 2
    assert min(hi - lo for _, lo, hi in parts) == 30
    assert sum(len(r) * (hi - lo) for r, lo, hi in parts) < 0.6 * B * S
    one = length_buckets(ids, torch.ones(B, S, dtype=torch.long), mask)  # no padding: one bucket
    assert len(one) == 1 and (one[0][1], one[0][2]) == (0, S)


def test_length_buckets_are_the_optimal_split_of_their_order(monkeypatch):
    """The split points minimise padded tokens + overhead (checked against every contiguous split of the order);
    two long rows among short ones get a bucket of their own instead of padding a quarter of the batch."""
    import itertools
    import recipe.train.rollout as rollout
    B, S = 12, 100
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(5, S, (B,), generator=gen).tolist()
    attn = torch.zeros(B, S, dtype=torch.long)
    for b, n in enumerate(lengths):  # right padding, as SFT batches
        attn[b, :n] = 1
    ids, mask = torch.arange(B)[:, None].expand(B, S).clone(), attn.float()
    monkeypatch.setattr(rollout, "_BUCKET_OVERHEAD_TOKENS", 60)
    parts = rollout.length_buckets(ids, attn, mask, max_buckets=4)
    got = sum(len(r) * (hi - lo) + 60 for r, lo, hi in parts)
    srt = sorted(lengths)
    best = min(sum((e - s) * srt[e - 1] + 60 for s, e in zip((0, *cuts), (*cuts, B)))
               for k in range(4) for cuts in itertools.combinations(range(1, B), k))
    assert got == best
    assert sorted(torch.cat([r for r, _, _ in parts]).tolist()) == list(range(B))
    # 62 short rows (60 columns) and 2 long ones (900): the long pair runs alone
    B, S = 64, 900
    attn = torch.zeros(B, S, dtype=torch.long)
    attn[:, :60] = 1
    attn[[5, 40]] = 1
    monkeypatch.setattr(rollout, "_BUCKET_OVERHEAD_TOKENS", 2048)
    parts = rollout.length_buckets(torch.zeros(B, S, dtype=torch.long), attn, attn.float())
    assert sorted((len(r), hi - lo) for r, lo, hi in parts) == [(2, 900), (62, 60)]


def test_lean_decode_step_equals_hugging_face_cached_forward(tiny):
    """NemotronHDecodeState (plain tensors, dense MoE) gives HF's logits at every step, also after rows are dropped
    and repeated (select), on left-padded prompts of different lengths."""
    from recipe.model.decode import supports_lean_decode
    from recipe.model.decode.nemotron_h import NemotronHDecodeState

    model, tok, prompts = tiny
    assert supports_lean_decode(model)
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model(**enc, use_cache=True, logits_to_keep=1)
        state = NemotronHDecodeState.from_hf_cache(model, out.cache, enc["attention_mask"], max_new_tokens=6)
        cache, attn = out.cache, enc["attention_mask"]
        tok_A = out.logits[:, -1].argmax(-1)
        for t in range(6):
            if t == 2:  # drop rows 1 and 4, repeat row 0
                keep = torch.tensor([0, 0, 2, 3, 5, 6, 7])
                state.select(keep)
                cache.reorder_cache(keep)
                attn, tok_A = attn[keep], tok_A[keep]
            attn = torch.cat([attn, torch.ones(len(tok_A), 1, dtype=attn.dtype)], 1)
            ref = model(input_ids=tok_A[:, None], attention_mask=attn, cache=cache, use_cache=True).logits[:, -1]
            ours = state.step(tok_A)
            assert ours.shape == ref.shape
            assert torch.allclose(ours, ref.float(), atol=1e-4), (t, (ours - ref).abs().max())
            tok_A = torch.multinomial(torch.softmax(ref.float(), -1), 1).squeeze(-1)
        with pytest.raises(RuntimeError, match="more steps"):
            state.step(tok_A)


def test_lean_and_hugging_face_decoding_sample_the_same_rows(tiny):
    model, tok, prompts = tiny
    runs = []
    for lean in (True, False):
        torch.manual_seed(3)
        runs.append(generate(model, tok, prompts * 3, max_new_tokens=14, temperature=1.0, top_p=0.9, lean_decode=lean))
    a, b = runs
    assert torch.equal(a.input_ids_BS, b.input_ids_BS)
    assert torch.allclose(a.inf_logprobs_BS, b.inf_logprobs_BS, atol=1e-4)


def test_prefill_in_length_buckets_equals_one_padded_prefill(tiny):
    """Prompts prefilled in separate length buckets, joined with left-padded keys, decode as one padded batch."""
    from recipe.model.decode.nemotron_h import NemotronHDecodeState
    from recipe.train.rollout import prefill_in_buckets

    model, tok, prompts = tiny
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    lengths = enc["attention_mask"].sum(1)
    assert len(set(lengths.tolist())) >= 3
    with torch.no_grad():
        out = model(**enc, use_cache=True, logits_to_keep=1)
        one = NemotronHDecodeState.from_hf_cache(model, out.cache, enc["attention_mask"], max_new_tokens=4)
        split, logits = prefill_in_buckets(model, enc["input_ids"], enc["attention_mask"], 4, overhead_tokens=0)
        assert split.key_mask_AL.shape == one.key_mask_AL.shape and split.pos == one.pos
        assert torch.equal(split.key_mask_AL, one.key_mask_AL)
        assert torch.allclose(logits, out.logits[:, -1].float(), atol=1e-4)
        tok_A = logits.argmax(-1)
        for _ in range(4):
            a, b = split.step(tok_A), one.step(tok_A)
            assert torch.allclose(a, b, atol=1e-4)
            tok_A = a.argmax(-1)


def test_length_buckets_split_prompts_of_different_lengths_when_forwards_are_cheap(tiny):
    from recipe.train.rollout import length_buckets

    model, tok, prompts = tiny
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    zeros = torch.zeros_like(enc["attention_mask"])
    parts = length_buckets(enc["input_ids"], enc["attention_mask"], zeros, overhead_tokens=0)
    assert len(parts) >= 3  # three distinct prompt lengths
    assert sorted(torch.cat([r for r, _, _ in parts]).tolist()) == list(range(len(prompts)))
    assert len(length_buckets(enc["input_ids"], enc["attention_mask"], zeros, overhead_tokens=10**6)) == 1


def test_right_padded_rows_run_without_a_mask_and_match_each_row_alone(tiny, monkeypatch):
    """SFT batches are right-padded: they run without an attention mask (SDPA's causal kernel), and every trained
    position's log-prob and the gradients equal those of each row run alone, unpadded."""
    import recipe.train.rollout as rollout
    model, tok, prompts = tiny
    seqs = [tok(p + " the answer is 42<|im_end|>", add_special_tokens=False)["input_ids"] for p in prompts[:4]]
    S = max(map(len, seqs))
    assert len(set(map(len, seqs))) > 1
    ids = torch.full((4, S), tok.pad_token_id)
    attn = torch.zeros(4, S, dtype=torch.long)
    mask = torch.zeros(4, S)
    for b, s in enumerate(seqs):
        ids[b, :len(s)], attn[b, :len(s)], mask[b, len(s) - 6:len(s)] = torch.tensor(s), 1, 1.0
    assert rollout.right_padded_only(attn) and not rollout.right_padded_only(attn.flip(1))
    seen = []
    inner = model.model.forward
    monkeypatch.setattr(model.model, "forward", lambda *a, **k: (seen.append(k.get("attention_mask")), inner(*a, **k))[1])
    monkeypatch.setattr(rollout, "_BUCKET_OVERHEAD_TOKENS", 10 ** 6)  # one bucket: the padded batch itself
    model.train()
    try:
        out = rollout.sequence_logprobs(model, ids, attn, mask)
        out.sum().backward()
        g = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
        assert seen == [None]
        alone = []
        for b, s in enumerate(seqs):
            n = len(s)
            alone.append(rollout.sequence_logprobs(model, ids[b:b + 1, :n], attn[b:b + 1, :n], mask[b:b + 1, :n]))
            assert torch.allclose(out[b, :n], alone[-1][0], atol=1e-5)
        sum(a.sum() for a in alone).backward()
        g_alone = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
    finally:
        model.eval()
    for n in g_alone:
        assert torch.allclose(g[n], g_alone[n], atol=1e-5, rtol=1e-4), n
