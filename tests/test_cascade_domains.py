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


def test_swe_reference_edit_fixes_every_repository_and_drawn_inputs_give_many_issues():
    """The agent's reference edit (``old`` -> ``new``, the stripped lines, replaced where ``old`` occurs once) turns
    the broken file into one that passes every hidden test; with drawn test inputs and constants up to 29 the
    generator makes hundreds of distinct issues (57 with the three fixed inputs and constants 2-9), and every
    function/bug kind among them, so held-out issues share their kind with training ones."""
    import random
    import re

    from recipe.domains.swe_domain import FUNCS, generate_repo, reference_trajectory
    _, spec = _spec(swe_max_constant=29, swe_drawn_inputs=True)
    issues, kinds = set(), set()
    for seed in range(600):
        repo = generate_repo(random.Random(seed), spec)
        (_, args, _), = [t for t in reference_trajectory(repo) if t[0] == "edit_file"]
        text = repo["files"][repo["path"]]
        assert text.count(args["old"]) == 1
        ns: dict = {}
        exec(text.replace(args["old"], args["new"]), ns)  # our own generated code
        tests = repo["tests"]["test_repo.py"].split("\n", 1)[1]   # without the module import
        exec(tests, ns)
        for name in [n for n in ns if n.startswith("test_")]:
            ns[name]()
        issues.add(repo["issue"])
        kinds.add((repo["function"], re.sub(r"(?<=[-+*,] )\d+", "K", repo["bug"])))   # k, not is_even's 2 and 3
    assert len(issues) > 300 and len(kinds) == sum(len(f[2]) for f in FUNCS.values())
    _, fixed = _spec(swe_max_constant=9, swe_drawn_inputs=False)
    assert len({generate_repo(random.Random(s), fixed)["issue"] for s in range(600)}) < 60


def test_long_context_documents_range_in_facts_and_sft_reads_a_short_copy():
    """Documents carry between long_context_min_people and long_context_people facts (one fact: a one-hop question
    about the only code in the document); the record's SFT rendering is the same facts and question in a document
    cut to long_context_sft_filler sentences, while RL and every evaluation read the full prompt."""
    import re
    _, spec = _spec(long_context_min_people=1, long_context_people=4, long_context_sft_filler=3)
    recs = build_tiny_splits(spec, ["long_context"], seed=5)["long_context"]["train"]
    counts = set()
    for r in recs:
        full, short = r["messages"][0]["content"], r["metadata"]["sft_messages"][0]["content"]
        facts = sorted(re.findall(r"The (?:code|friend) of \w+ is \w+\.", full))
        assert facts == sorted(re.findall(r"The (?:code|friend) of \w+ is \w+\.", short))
        assert full.split("Question:")[1] == short.split("Question:")[1]
        assert short.split("\n")[1].count(".") == len(facts) + 3       # the facts and three filler sentences
        people = len(re.findall(r"The code of", full))
        counts.add(people)
        if people == 1:
            assert "friend" not in full.split("Question:")[1]
    assert counts == {1, 2, 3, 4}
    _, fixed = _spec()
    fixed = fixed.model_copy(update={"long_context_min_people": None, "long_context_sft_filler": None})
    for r in build_tiny_splits(fixed, ["long_context"], seed=5)["long_context"]["train"]:
        assert "sft_messages" not in r["metadata"]
        assert len(re.findall(r"The code of", r["messages"][0]["content"])) == fixed.long_context_people


@pytest.mark.parametrize("family", ["max", "min", "div", "add"])
def test_code_hidden_tests_tell_the_constant_from_its_neighbours(family):
    """Whatever k's size, a function written with k - 1 or k + 1 fails the hidden tests of the task with k."""
    import random

    from recipe.domains.code_domain import hidden_tests, reference_function
    for k in (3, 17, 28):
        tests = hidden_tests(family, k, random.Random(k), 5).replace("from solution import f", "")
        for kk, should_pass in ((k, True), (k - 1, False), (k + 1, False)):
            ns: dict = {}
            exec(reference_function(family, kk) + tests, ns)  # noqa: S102 - our own reference and tests
            passed = True
            for name, fn in list(ns.items()):
                if name.startswith("test_"):
                    try:
                        fn()
                    except AssertionError:
                        passed = False
            assert passed is should_pass, (family, k, kk)
