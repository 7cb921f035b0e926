"""The small profile's instruction-following generator (recipe.domains.if_registry_domain): IFEval's own instructions
with their own descriptions and random arguments, on requests from our bank, graded by the reference checkers; its
reference answers score 1 and answers broken on one constraint score 0; IFBench's instruction types never occur."""
from __future__ import annotations

import json
import random
import re

import pytest

from recipe.config import load_config
from recipe.domains import build_tiny_splits, if_registry_domain as gen
from recipe.domains.if_requests import TEMPLATES, TOPICS
from recipe.rewards import verify
from recipe.rewards.reference_if import registry

N = 160


@pytest.fixture(scope="module")
def spec():
    return load_config("small").domains.tiny


@pytest.fixture(scope="module")
def examples(spec):
    rng = random.Random(7)
    return [gen.generate(rng, spec) for _ in range(N)]


def _record(ex, content):
    return {"messages": [{"role": r, "content": c} for r, c in ex.prompt], "verifier": ex.verifier,
            "domain": "instruction_following"}


def test_only_ifeval_ids_with_arguments_their_checkers_accept(examples, spec):
    reg = registry()
    ifeval = gen.ifeval_registry()
    seen = set()
    for ex in examples:
        ids, kws = ex.verifier["instruction_id_list"], ex.verifier["kwargs"]
        assert spec.if_min_constraints <= len(ids) <= spec.if_max_constraints and len(set(ids)) == len(ids)
        for iid, kw in zip(ids, kws):
            assert reg[iid].origin == "ifeval" and iid in ifeval.INSTRUCTION_DICT  # never an IFBench type
            assert iid not in spec.if_exclude_ids
            reg[iid].checker(kw, ex.prompt[0][1])  # the reference builds it: every argument given and usable
            seen.add(iid)
        for i, a in enumerate(ids):  # no pair the registry marks as conflicting, either way round
            assert not any(b in ifeval.INSTRUCTION_CONFLICTS.get(a, ()) or a in ifeval.INSTRUCTION_CONFLICTS.get(b, ())
                           for b in ids[i + 1:])
    assert len(seen) >= 18, sorted(seen)  # most of IFEval's 25 types, not a handful


def test_descriptions_are_the_registrys_own_with_the_drawn_arguments(examples):
    ifeval = gen.ifeval_registry()
    for ex in examples[:40]:
        prompt = ex.prompt[0][1]
        for iid, kw in zip(ex.verifier["instruction_id_list"], ex.verifier["kwargs"]):
            inst = ifeval.INSTRUCTION_DICT[iid](iid)
            text = inst.build_description(**kw)  # every argument given: the description is fixed by them
            assert text in prompt, (iid, text, prompt)


def test_requests_come_from_our_bank(examples):
    bank = {t.format(topic=topic) for t in TEMPLATES for topic in TOPICS}
    assert all(gen.request_of(ex.prompt[0][1]) in bank for ex in examples)


def test_reference_answers_score_1_through_the_reward(examples, spec):
    for ex in examples:
        r = verify(_record(ex, ex.content), ex.content)
        assert r.score == 1.0, (ex.prompt, ex.content, r)
        assert len(ex.content.split()) <= spec.if_max_answer_words
        thinking = f"<think>\n{ex.reasoning}\n</think>\n{ex.content}"
        assert verify(_record(ex, thinking), thinking).score == 1.0


# one way to break each constraint (applied to an answer that meets it): the reward must then be 0
BREAKS = {
    "detectable_format:title": lambda t, kw: re.sub(r"<<[^\n]+>>", "", t),
    "startend:quotation": lambda t, kw: t.strip('"'),
    "detectable_format:json_format": lambda t, kw: t + " }",
    "detectable_content:postscript": lambda t, kw: t.replace(kw["postscript_marker"], "Note"),
    "punctuation:no_comma": lambda t, kw: t + ", then",
    "change_case:english_lowercase": lambda t, kw: "Then " + t,
    "change_case:english_capital": lambda t, kw: t + " then",
    "detectable_format:number_bullet_lists": lambda t, kw: t + "\n* One more.",
    "startend:end_checker": lambda t, kw: t + " Bye.",
    "keywords:existence": lambda t, kw: re.sub(re.escape(kw["keywords"][0]), "", t, flags=re.I),
    "combination:repeat_prompt": lambda t, kw: "Sure. " + t,
    "detectable_format:constrained_response": lambda t, kw: "I cannot say.",
}


def test_an_answer_broken_on_one_constraint_scores_0(examples):
    broken = set()
    for ex in examples:
        for iid, kw in zip(ex.verifier["instruction_id_list"], ex.verifier["kwargs"]):
            if iid in BREAKS:
                bad = BREAKS[iid](ex.content, kw)
                assert verify(_record(ex, bad), bad).score == 0.0, (iid, bad)
                broken.add(iid)
    assert len(broken) >= 8, sorted(broken)
    assert all(verify(_record(ex, ""), "").score == 0.0 for ex in examples[:10])


def test_same_seed_same_examples(spec, examples):
    rng = random.Random(7)
    again = [gen.generate(rng, spec) for _ in range(10)]
    assert [(e.prompt, e.content, json.dumps(e.verifier)) for e in again] == \
           [(e.prompt, e.content, json.dumps(e.verifier)) for e in examples[:10]]


def test_the_profile_picks_it_for_instruction_following_only(spec):
    small = spec.model_copy(update={"train_items": 6, "val_items": 2, "selection_items": 1})
    splits = build_tiny_splits(small, ["instruction_following", "math"], seed=0)
    rec = splits["instruction_following"]["train"][0]
    assert gen.request_of(rec["messages"][0]["content"]) in {t.format(topic=x) for t in TEMPLATES for x in TOPICS}
    assert splits["math"]["train"][0]["verifier"]["name"] != "instruction_following"
    tiny = load_config("tiny").domains.tiny
    assert "instruction_following" not in tiny.generators  # the tiny profile keeps its own generator


def test_unknown_excluded_id_is_an_error(spec):
    with pytest.raises(KeyError, match="not IFEval instruction ids"):
        gen.training_ids(spec.model_copy(update={"if_exclude_ids": ["count:keywords_multiple"]}))
