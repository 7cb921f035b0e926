"""``tiny_swe_agentic`` in the eval harness plays episodes, as validation scores the domain: each sample is a tool
loop whose actions run in the sandbox and whose score is the hidden tests on the final files. The backend here is a
stand-in policy that answers each turn from what the conversation shows it (the repository is real, the actions
run for real); the tiny model's own episodes run in the end-to-end test's eval phase."""
from __future__ import annotations

import json
import re

import pytest

from recipe.config import load_config
from recipe.domains import build_tiny_splits
from recipe.eval.backends.backend_interface import Generation
from recipe.eval.benchmarks.suite_registry import RowError, get_suite
from recipe.eval.harness import evaluate_suite
from recipe.eval.sampling_settings import SamplingParams


def call(name, **args):
    return f"<tool_call><function={name}>" + "".join(f"<parameter={k}>{v}</parameter>" for k, v in args.items()) \
        + "</function></tool_call>"


class ReadEditTestSubmit:
    """Reads the file, replaces the function's broken line (from the issue and the file it read), runs the tests,
    submits: what the reference trajectory does, decided from the conversation only."""
    name = "scripted"

    def __init__(self, fix: bool = True):
        self.fix, self.turn_calls, self.seen_tools = fix, 0, []

    def describe(self):
        return {"backend": self.name, "model": f"read-edit-test-submit fix={self.fix}"}

    def _next(self, messages):
        said = [m for m in messages if m["role"] == "assistant"]
        if not said:
            return call("list_files")
        tool_out = [m["content"] for m in messages if m["role"] == "tool"]
        if len(said) == 1:
            return call("read_file", path=tool_out[-1].split("\n")[0])
        if len(said) == 2:
            issue = messages[0]["content"].split("\n")[0]  # "Issue: f(arg) returns got but should return want."
            fn = re.match(r"Issue: (\w+)\(", issue).group(1)
            src = tool_out[-1]
            lines = src.split("\n")
            at = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {fn}("))
            broken = lines[at + 1].strip()
            want = re.search(r"should return (.+)\.$", issue).group(1)
            arg = re.match(r"Issue: \w+\((.+)\) returns", issue).group(1)
            fixed = f"return {want}" if not self.fix else self._fix(broken, fn, arg, want)
            path = re.search(r"<parameter=path>(.+?)</parameter>", said[-1]["content"]).group(1)
            return call("edit_file", path=path, old=broken, new=fixed)
        if len(said) == 3:
            return call("run_tests")
        return call("submit")

    @staticmethod
    def _fix(broken: str, fn: str, arg: str, want: str) -> str:
        from recipe.domains.swe_domain import FUNCS
        sig, good, _bads = FUNCS[fn][:3]
        for k in range(2, 100):  # the constant the repository's tests expect: the one that gives `want` on `arg`
            body = good.format(k=k, k1=k + 1)
            if eval(f"(lambda {sig}: {body})({arg})") == eval(want):  # noqa: S307 - this test's own literals
                return f"return {body}"
        raise AssertionError("no constant fits")

    def generate(self, jobs, sampling):
        self.turn_calls += 1
        for j in jobs:
            assert sampling.thinking is False  # episodes run in non-thinking mode
            self.seen_tools.append([t["function"]["name"] for t in j.tools])
            yield j, Generation(content=self._next(j.messages), finish_reason="stop", prompt_tokens=10,
                                completion_tokens=5)


class Talks:
    name = "talks"

    def describe(self):
        return {"backend": self.name, "model": "plain text"}

    def generate(self, jobs, sampling):
        for j in jobs:
            yield j, Generation(content="I think the bug is in the function.", finish_reason="stop")


def _rows(n=3, seed=0, split="val"):
    """The domain's rows as a run's data phase writes them (each a step of a reference trajectory)."""
    spec = load_config("tiny").domains.tiny.model_copy(update={
        "val_items_per_domain": {"swe_agentic": n}, "train_items_per_domain": {"swe_agentic": n}, "selection_items": 1})
    return build_tiny_splits(spec, ["swe_agentic"], seed)["swe_agentic"][split]


@pytest.fixture
def suite():
    return get_suite("tiny_swe_agentic")


def test_a_good_policy_resolves_every_repository_and_the_episodes_are_cached(suite, tmp_path):
    rows = suite.adapt_rows(_rows())
    policy = ReadEditTestSubmit()
    s = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=54, thinking=True, k=1)
    res = evaluate_suite(suite, rows, policy, s, tmp_path)
    assert res["n"] == len(rows) and res["score"] == 100.0, res
    assert res["episode_ends"] == {"submitted": len(rows)}
    assert policy.turn_calls == 5  # one backend call per turn for every open episode, not one per episode
    assert all(t == ["list_files", "read_file", "edit_file", "run_tests", "submit"] for t in policy.seen_tools)
    items = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert all(v["extracted"] == "list_files,read_file,edit_file,run_tests,submit" for it in items for v in it["samples"])
    cached = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(cached) == len(rows) and all(c["generation"]["episode"]["tests"]["passed"] > 0 for c in cached)
    # a second run reuses the played episodes
    again = evaluate_suite(suite, rows, ReadEditTestSubmit(), s, tmp_path)
    assert again["generation"]["reused_from_cache"] == len(rows) and again["generation"]["generated"] == 0
    assert again["score"] == 100.0


def test_a_wrong_edit_fails_the_hidden_tests(suite, tmp_path):
    rows = suite.adapt_rows(_rows(seed=1))
    res = evaluate_suite(suite, rows, ReadEditTestSubmit(fix=False), SamplingParams(temperature=0.0, k=1), tmp_path)
    assert res["score"] == 0.0 and res["episode_ends"] == {"submitted": len(rows)}


def test_a_plain_answer_ends_the_episode_as_malformed_with_no_answer(suite, tmp_path):
    rows = suite.adapt_rows(_rows(n=2))
    res = evaluate_suite(suite, rows, Talks(), SamplingParams(temperature=1.0, k=2), tmp_path)
    assert res["score"] == 0.0 and res["no_answer_rate"] == 100.0 and res["samples"] == 4
    assert res["episode_ends"] == {"malformed_action": 4}


def test_one_row_per_repository_and_a_response_file_cannot_be_scored(suite):
    steps = _rows(n=12, seed=3, split="train")  # training rows: several steps of the same repositories
    repos = {r["verifier"]["issue"] + r["verifier"]["path"] for r in steps}
    assert len(suite.adapt_rows(steps)) == len(repos)
    with pytest.raises(RowError, match="cannot be scored"):
        suite.score(steps[0], "some response text", None)
