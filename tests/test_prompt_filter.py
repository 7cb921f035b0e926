"""The Code-RL hard-prompt filter: prompts the input checkpoint solves on every sample leave the pool; the others
stay; a pool that would be emptied is kept whole and says so."""
from types import SimpleNamespace

import torch

from recipe.config import load_config
from recipe.domains import build_tiny_splits
from recipe.train import prompt_filter


def _ctx_and_pool():
    cfg = load_config("tiny")
    spec = cfg.domains.tiny.model_copy(update={"train_items": 24, "val_items": 4, "selection_items": 0,
                                               "train_items_per_domain": {}, "val_items_per_domain": {}})
    recs = build_tiny_splits(spec, ["code"], seed=0)["code"]["train"]
    tok = SimpleNamespace(apply_chat_template=lambda msgs, **kw: msgs[-1]["content"])
    ctx = SimpleNamespace(seed=0, stage="code_rl", model=None, tokenizer=tok)
    return ctx, cfg.code_rl.model_copy(update={"hard_prompt_filter_samples": 4}), recs


def test_solved_prompts_are_dropped(monkeypatch):
    ctx, scfg, recs = _ctx_and_pool()
    by_prompt = {r["messages"][-1]["content"]: r for r in recs}
    easy = set(sorted(by_prompt)[: len(by_prompt) // 2])

    def generate(model, tok, prompts, **kw):
        texts = [("<think>x</think>" + by_prompt[p]["metadata"]["reference"]["content"]) if p in easy
                 else "<think>x</think>```python\ndef f(x):\n    return None\n```" for p in prompts]
        return SimpleNamespace(texts=texts, finished_B=torch.ones(len(prompts), dtype=torch.bool))
    monkeypatch.setattr(prompt_filter, "generate", generate)
    pools, stats = prompt_filter.drop_solved_prompts(ctx, scfg, {"code": recs})
    kept = {r["messages"][-1]["content"] for r in pools["code"]}
    assert kept == set(by_prompt) - easy
    assert stats["code"]["solved_all"] == len(easy) and stats["code"]["samples"] == 4


def test_a_fully_solved_pool_is_kept_whole(monkeypatch):
    ctx, scfg, recs = _ctx_and_pool()
    by_prompt = {r["messages"][-1]["content"]: r for r in recs}

    def generate(model, tok, prompts, **kw):
        return SimpleNamespace(texts=["<think>x</think>" + by_prompt[p]["metadata"]["reference"]["content"]
                                      for p in prompts], finished_B=torch.ones(len(prompts), dtype=torch.bool))
    monkeypatch.setattr(prompt_filter, "generate", generate)
    pools, stats = prompt_filter.drop_solved_prompts(ctx, scfg, {"code": recs})
    assert pools["code"] == recs and stats["code"]["kept_whole_pool"]
