"""Generation caps against the reference answers they must hold (recipe.train.generation_caps). A cap below a
domain's reference answers cuts every such answer (reward 0): at seed 0 the tiny profile once validated tool calls,
code and SWE edits under caps of 40 tokens while their answers needed up to 48, 46 and 95 (512-token vocabulary)."""
import pytest

from recipe.config import load_config
from recipe.domains import build_tiny_splits, tokenizer_corpus
from recipe.model.tokenizer import train_tokenizer
from recipe.train.generation_caps import cap_shortfalls, reference_answer_tokens


@pytest.fixture(scope="module")
def tiny_data():
    """The tiny profile's domains and a tokenizer trained as SFT trains it, on a seed other than make run's."""
    cfg = load_config("tiny", ["run.seed=1"])
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    tok = train_tokenizer(tokenizer_corpus(splits, cfg.domains.names, cfg.model.tokenizer.corpus_examples // 2),
                          cfg.model.tokenizer.vocab_size)
    return cfg, splits, tok


def test_tiny_profile_caps_hold_every_reference_answer(tiny_data):
    cfg, splits, tok = tiny_data
    assert cap_shortfalls(cfg, tok, splits) == []


def test_a_short_cap_is_reported_with_stage_domain_and_lengths(tiny_data):
    cfg, splits, tok = tiny_data
    swe_longest = max(reference_answer_tokens(tok, splits["swe"]["train"][:200], thinking=True))
    math_longest = max(reference_answer_tokens(tok, splits["math"]["train"][:200], thinking=True))
    assert swe_longest > 2 * math_longest  # an edit repeats the broken function and its fix
    short = load_config("tiny", ["run.seed=1", f"swe_rl.agentless.max_response_tokens={swe_longest - 1}",
                                 "evaluation.max_new_tokens_per_domain={}"])
    found = cap_shortfalls(short, tok, splits)
    agentless = [s for s in found if s.where == "swe_rl.agentless"]
    assert [(s.domain, s.thinking, s.cap, s.longest_reference) for s in agentless] == \
        [("swe", True, swe_longest - 1, swe_longest)]
    # validation falls back to max_new_tokens (28) for every domain: the long ones are reported, the short ones not
    evaluation = {s.domain for s in found if s.where == "evaluation"}
    assert {"swe", "code", "swe_agentic"} <= evaluation
    assert not evaluation & {"math", "mcqa"}
    assert "cap " in str(agentless[0]) and "swe" in str(agentless[0])


def test_caps_are_checked_per_mode(tiny_data):
    """Instruct answers carry no reasoning: shorter than thinking ones for the same record."""
    cfg, splits, tok = tiny_data
    recs = splits["code"]["train"][:50]
    think, plain = reference_answer_tokens(tok, recs, True), reference_answer_tokens(tok, recs, False)
    assert all(t > p for t, p in zip(think, plain))
    only_instruct = load_config("tiny", ["run.seed=1", "code_rl.mode=instruct", f"code_rl.max_response_tokens={max(plain)}"])
    assert not [s for s in cap_shortfalls(only_instruct, tok, splits, stages=["code_rl"], evaluation=False)]
    thinking = load_config("tiny", ["run.seed=1", f"code_rl.max_response_tokens={max(plain)}"])
    assert [s.domain for s in cap_shortfalls(thinking, tok, splits, stages=["code_rl"], evaluation=False)] == ["code"]


def test_unknown_domain_in_validation_caps_is_refused():
    with pytest.raises(Exception, match="max_new_tokens_per_domain: unknown domain.*nope"):
        load_config("tiny", ["evaluation.max_new_tokens_per_domain={nope: 10}"])
