"""Validation in one decode batch (recipe.validation.in_process.validate_in_one_batch, the path on CUDA) against the
domain-by-domain one: greedy rows equal, with per-domain caps and the long prompts in a call of their own."""
import pytest
import torch

from hub_server.tiny import tiny_validation_setup

DOMAINS = ["math", "instruction_following", "mcqa", "chat", "long_context", "tool_call"]


@pytest.fixture(scope="module")
def setup():
    return tiny_validation_setup(n=3)


def _ecfg(ecfg, **kw):
    return ecfg.model_copy(update={"max_new_tokens": 8, "max_new_tokens_per_domain": {"math": 3, "mcqa": 5}, **kw})


def test_greedy_rows_in_one_batch_equal_the_domain_by_domain_rows(setup, one_torch_thread):
    from recipe.validation import in_process

    cfg, splits, model, tok, ecfg = setup
    ecfg = _ecfg(ecfg, decoding="greedy")
    lengths = {d: len(str(splits[d]["val"][0]["messages"])) for d in DOMAINS}
    assert lengths["long_context"] > in_process.LONG_PROMPT_FACTOR * lengths["math"]   # a call of its own
    one = in_process.validate_in_one_batch(model, tok, splits, DOMAINS, ecfg, split="val", thinking=True, seed=1)
    ref = in_process.validate_in_process(model, tok, splits, DOMAINS, ecfg, split="val", thinking=True, seed=1)
    assert [r["domain"] for r in one] == [r["domain"] for r in ref]
    assert one == ref
    # the caps mattered: at the batch's largest cap (8) math's answers would have been others
    wide = in_process.validate_in_process(model, tok, splits, ["math"], _ecfg(ecfg, max_new_tokens_per_domain={},
                                          decoding="greedy"), split="val", thinking=True, seed=1)
    assert [r["response"] for r in wide] != [r["response"] for r in one if r["domain"] == "math"]


def test_sampled_rows_in_one_batch_keep_the_layout_and_repeat_under_the_seed(setup, one_torch_thread):
    from recipe.validation import in_process

    cfg, splits, model, tok, ecfg = setup
    ecfg = _ecfg(ecfg, decoding="sample", samples_per_prompt=2, temperature=1.0, top_p=1.0)
    runs = [in_process.validate_in_one_batch(model, tok, splits, DOMAINS, ecfg, split="val", thinking=True, seed=s)
            for s in (1, 1, 2)]
    ref = in_process.validate_in_process(model, tok, splits, DOMAINS, ecfg, split="val", thinking=True, seed=1)
    key = [(r["domain"], r["item_id"], r["sample"]) for r in ref]
    assert [(r["domain"], r["item_id"], r["sample"]) for r in runs[0]] == key
    assert runs[0] == runs[1]
    assert [r["response"] for r in runs[2]] != [r["response"] for r in runs[0]]
    assert all(isinstance(r["reward"], float) for r in runs[0])


def test_validate_samples_takes_the_one_batch_path_on_cuda_only(setup, monkeypatch):
    from recipe.validation import domain_validation as validate

    cfg, splits, model, tok, ecfg = setup
    seen = []
    monkeypatch.setattr(validate, "validate_in_one_batch", lambda *a, **k: seen.append("one") or [])
    monkeypatch.setattr(validate, "validate_in_process", lambda *a, **k: seen.append("in") or [])
    validate.validate_samples(model, tok, splits, ["math"], ecfg.model_copy(update={"lanes": 1}))
    assert seen == ["in"]
    if torch.cuda.is_available():
        validate.validate_samples(model.cuda(), tok, splits, ["math"], ecfg.model_copy(update={"lanes": 1}))
        assert seen == ["in", "one"]
