"""The tiny long_context / code / swe / swe_agentic domains: deterministic per seed, train/validation disjoint,
long-context prompts >= 4x every other domain's, reference answers graded correct by the real verifiers."""
import pytest

from recipe.config import load_config
from recipe.domains import build_tiny_splits
from recipe.model.chat_render import render_chat
from recipe.rewards import verify_batch

NEW = ["long_context", "code", "swe", "swe_agentic"]


def _spec(**kw):
    cfg = load_config("tiny")
    return cfg, cfg.domains.tiny.model_copy(update={"train_items": 40, "val_items": 10, "selection_items": 0,
                                                     "train_items_per_domain": {}, "val_items_per_domain": {}, **kw})


def _key(r):
    v = r["verifier"]
    return (v.get("issue"), str(v.get("files"))) if r["domain"].startswith("swe") else str(r["messages"])


@pytest.mark.parametrize("domain", NEW)
def test_generator_is_deterministic_and_disjoint(domain):
    _, spec = _spec()
    a = build_tiny_splits(spec, [domain], seed=3)[domain]
    b = build_tiny_splits(spec, [domain], seed=3)[domain]
    c = build_tiny_splits(spec, [domain], seed=4)[domain]
    assert a == b
    assert a != c
    assert not {_key(r) for r in a["train"]} & {_key(r) for r in a["val"]}


def test_long_context_prompt_is_4x_every_other_domain():
    """In tokens of the tiny tokenizer (trained as the SFT stage trains it), against the first-turn prompt of every
    other domain (the agentic domain's later turns are conversation history, not a prompt)."""
    from recipe.domains import tokenizer_corpus
    from recipe.model.tokenizer import train_tokenizer
    cfg, spec = _spec()
    sp = build_tiny_splits(spec, cfg.domains.names, seed=0)
    tok = train_tokenizer(tokenizer_corpus(sp, cfg.domains.names, 40), cfg.model.tokenizer.vocab_size)

    def n_tokens(r):
        first = r["messages"][: next(i for i, m in enumerate(r["messages"]) if m["role"] == "user") + 1]
        text = render_chat(first, r.get("tools"), add_generation_prompt=True)
        return len(tok(text, add_special_tokens=False)["input_ids"])
    longest_other = max(n_tokens(r) for d in cfg.domains.names if d != "long_context" for r in sp[d]["train"])
    lc = [n_tokens(r) for r in sp["long_context"]["train"]]
    assert min(lc) >= 4 * longest_other, (min(lc), longest_other)
    assert max(lc) + 64 <= cfg.model.architecture.max_position_embeddings  # prompt + answer fit the model
    two_hop = [r for r in sp["long_context"]["train"] if "friend of" in r["messages"][0]["content"].split("Question:")[1]]
    assert two_hop  # some questions need two facts


@pytest.mark.parametrize("domain", ["long_context", "code", "swe"])
def test_reference_answers_score_one(domain):
    _, spec = _spec()
    recs = build_tiny_splits(spec, [domain], seed=1)[domain]["val"][:6]
    res = verify_batch(recs, ["<think>ok</think>" + r["metadata"]["reference"]["content"] for r in recs])
    assert [r.score for r in res] == [1.0] * len(recs), [r.reason for r in res]


def test_swe_bug_is_visible_to_hidden_tests():
    """The unedited repository fails its tests (an empty edit is not a fix)."""
    _, spec = _spec()
    from recipe.rewards.unit_tests import grade
    for r in build_tiny_splits(spec, ["swe"], seed=2)["swe"]["val"][:4]:
        res = grade(r["verifier"]["files"], r["verifier"])
        assert res.score == 0.0 and res.reason == "tests_failed" and res.details["passed"] < res.details["total"]


def test_swe_edit_is_the_broken_line_unless_that_line_is_not_unique():
    """The reference edit is the smallest unique one: the broken ``return`` line (short enough for a tiny model to
    write), the whole function when the same line also occurs in another function of the file."""
    import random

    from recipe.domains.swe_domain import generate_repo
    _, spec = _spec()
    lines = whole = 0
    for seed in range(1500):
        repo = generate_repo(random.Random(seed), spec)
        text = repo["files"][repo["path"]]
        assert text.count(repo["buggy"]) == 1
        if repo["buggy"].startswith("def "):
            whole += 1
            assert text.count(repo["buggy"].splitlines()[1] + "\n") > 1  # the line alone would be ambiguous
        else:
            lines += 1
            assert repo["buggy"].startswith("    return ") and repo["buggy"].count("\n") == 1
    assert lines > 1400 and whole >= 1
