"""The AIME/HMMT math grader against NeMo-Skills' ``math_grader`` (``extract_answer`` + ``math_equal``): the expected
verdicts below are the reference's own, produced by running NVIDIA/NeMo-Skills at commit 0b012df8 in its environment
(``benchmarks/bench_math_parity.py`` does it for every item x format); the deliberate deviations are listed in
docs/EVAL_HARNESS.md, and each one is tested here."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from recipe.eval.benchmarks.math import score_math
from recipe.eval.benchmarks.math_grading import equivalent, final_boxed

# (gold, response, NeMo-Skills' predicted_answer, NeMo-Skills' verdict)
REFERENCE = [
    ("70", "The answer is \\boxed{70}.", "70", True),
    ("70", "\\boxed{\\$70}", "\\$70", True),
    ("70", "\\boxed{70\\%}", "70\\%", True),
    ("70", "\\boxed{70.}", "70.", True),
    ("70", "\\boxed{70}\\boxed{7", None, False),  # a last box that never closes: no answer, not the earlier box
    ("70", "\\boxed{70} \\boxed{}", "", False),
    ("70", "\\boxed{69}", "69", False),
    ("-3", "\\boxed{-3}", "-3", True),
    ("B", "\\boxed{(B)}", "(B)", True),
    ("B", "\\boxed{\\text{B}}", "\\text{B}", True),
    ("\\frac{1}{2}", "\\boxed{0.5}", "0.5", True),
    ("\\frac{1}{2}", "\\boxed{1/2}", "1/2", True),
    ("yes", "\\boxed{Yes}", "Yes", False),
    ("2,4", "\\boxed{4, 2}", "4, 2", True),
    ("\\sqrt{2}", "\\boxed{\\frac{\\sqrt{8}}{2}}", "\\frac{\\sqrt{8}}{2}", True),
]

# Deliberate deviations (docs/EVAL_HARNESS.md, "Math grading"): name -> (gold, response, ours, NeMo-Skills')
DEVIATIONS = {
    "fbox": ("70", "The answer is \\fbox{70}.", True, False),
    "boxed_space_token": ("70", "The answer is \\boxed 70", True, False),
    "boxed_space_brace": ("70", "The answer is \\boxed {70}.", True, False),
    "leading_zeros": ("70", "\\boxed{070}", True, False),
}


@pytest.mark.parametrize("gold,response,extracted,correct", REFERENCE)
def test_agrees_with_nemo_skills(gold, response, extracted, correct):
    assert final_boxed(response) == extracted
    v = score_math(gold, response, None)
    assert (v["score"] == 1.0) is correct, v
    assert v["no_answer"] is (extracted is None)


@pytest.mark.parametrize("name", sorted(DEVIATIONS))
def test_each_deviation_is_what_the_docs_say(name):
    gold, response, ours, _nemo_skills = DEVIATIONS[name]
    assert (score_math(gold, response, None)["score"] == 1.0) is ours


def test_deviation_edges():
    assert final_boxed("\\boxed{12} and \\fbox{7}") == "12"  # \fbox only without any \boxed
    assert final_boxed("\\boxed 70.") == "70"
    assert final_boxed("\\boxed70") is None  # no space, no brace: nothing read
    assert equivalent("70", "0070") == (True, "integer")
    assert equivalent("70", "-70")[0] is False
    assert equivalent("3375", "3375.0") == (True, "math_verify")


def test_docs_list_every_deviation_with_a_reason():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "EVAL_HARNESS.md").read_text()
    section = doc.split("## Math grading", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \| (.+?) \|$", section, re.M)
    assert {r[0] for r in rows} == set(DEVIATIONS)
    assert all(len(reason.strip()) > 20 for _, _, reason in rows)


def test_bench_documents_the_same_deviations(monkeypatch):
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_math_parity.py"
    spec = importlib.util.spec_from_file_location("bench_math_parity", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, mod)  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    assert set(mod.DOCUMENTED) == set(DEVIATIONS)
    assert set(mod.DOCUMENTED) <= {f.name for f in mod.FORMATS}
