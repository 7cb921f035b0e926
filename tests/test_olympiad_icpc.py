"""ICPC: standings arithmetic on hand-computed runs, the default validator's flags, Kattis
packages we write (default and custom output validator), sandboxed verdicts and the submission policy."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from olympiad_packages import write_kattis_maxpair
from recipe.eval.olympiad.icpc import (ICPCCandidate, ICPCJudge, KattisPackageError, Run, load_kattis, simulate_contest,
                                       standings)
from recipe.eval.olympiad.icpc.output_validator import default_validate
from recipe.sandbox import probe

SOL = Path(__file__).parent / "fixtures" / "olympiad" / "maxpair_solutions"
needs_sandbox = pytest.mark.skipif(not probe().get("available") or shutil.which("g++") is None,
                                   reason="needs bubblewrap and g++ (make system-deps)")


def test_penalty_arithmetic():
    runs = [Run("A", 10, "WA"), Run("A", 15, "TLE"), Run("A", 30.9, "AC"), Run("A", 40, "WA"),
            Run("B", 5, "CE"), Run("B", 20, "AC"), Run("C", 50, "WA"), Run("D", 7, "JE"), Run("D", 9, "AC")]
    s = standings(runs, problems=["A", "B", "C", "D", "E"])
    assert s["solved"] == 3
    assert s["penalty_minutes"] == (30 + 2 * 20) + 20 + 9
    assert s["submissions_per_problem"] == {"A": 3, "B": 2, "C": 1, "D": 2, "E": 0}
    assert s["problems"]["C"]["penalty"] == 0 and not s["problems"]["C"]["solved"]
    s_ce = standings(runs, compile_error_penalty=True)
    assert s_ce["penalty_minutes"] == 70 + 40 + 9
    assert standings([], problems=["A"])["solved"] == 0


def test_default_validator_flags():
    assert default_validate("1 2\n", "1   2")
    assert default_validate("YES", "yes") and not default_validate("YES", "yes", ["case_sensitive"])
    assert not default_validate("1 2", "1  2", ["space_change_sensitive"])
    assert default_validate("0.3333334", "0.33333333", ["float_tolerance", "1e-6"])
    assert not default_validate("0.334", "0.33333333", ["float_tolerance", "1e-6"])
    assert default_validate("100.00001", "100", ["float_relative_tolerance", "1e-6"])
    assert not default_validate("1 2 3", "1 2")


def test_package_loading(tmp_path):
    p = load_kattis(write_kattis_maxpair(tmp_path / "a"))
    assert (p.time_limit_s, p.memory_mb, p.validation) == (0.5, 256, "default")
    assert len(p.samples) == 1 and len(p.secret) == 8
    c = load_kattis(write_kattis_maxpair(tmp_path / "b", custom_validator=True))
    assert c.validation == "custom" and c.validator_source.name == "validator.cpp"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "problem.yaml").write_text("name: x\nvalidation: custom interactive\n")
    with pytest.raises(KattisPackageError, match="interactive"):
        load_kattis(tmp_path / "c")


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("kattis")
    return {"A": load_kattis(write_kattis_maxpair(d / "A")),
            "B": load_kattis(write_kattis_maxpair(d / "B", custom_validator=True))}


@needs_sandbox
def test_verdicts_with_default_and_custom_validator(problems):
    ja, jb = ICPCJudge(problems["A"]), ICPCJudge(problems["B"])
    src = {n: (SOL / f"{n}.cpp").read_text() for n in ("correct", "overflow", "crash", "compile_error", "first_pair")}
    assert ja.judge(src["correct"]).verdict == "AC"
    assert jb.judge(src["correct"]).verdict == "AC" and jb.validator_bin
    wa = jb.judge(src["overflow"])
    assert wa.verdict == "WA" and wa.samples_passed and wa.secret_run and "secret" in wa.failed_case
    assert ja.judge(src["crash"]).verdict == "RTE"
    assert ja.judge(src["compile_error"]).verdict == "CE"
    fp = ja.judge(src["first_pair"])
    assert fp.verdict == "WA" and fp.samples_passed is False and not fp.secret_run and fp.cases_run == 1


@needs_sandbox
def test_policy_solved_submissions_penalty(problems):
    src = {n: (SOL / f"{n}.cpp").read_text() for n in ("correct", "overflow", "slow", "first_pair")}
    cands = [ICPCCandidate("A", "g1", src["first_pair"]), ICPCCandidate("A", "g2", src["overflow"]),
             ICPCCandidate("A", "g3", src["slow"]), ICPCCandidate("A", "g4", src["correct"]),
             ICPCCandidate("A", "g5", src["overflow"]),
             ICPCCandidate("B", "h1", src["overflow"], minute=12), ICPCCandidate("B", "h2", src["overflow"], minute=30)]
    judges = {p: ICPCJudge(problems[p]) for p in problems}
    res = simulate_contest(cands, judges.__getitem__, minutes_per_submission=5, max_submissions_per_problem=5)
    # A: g1 filtered by the sample; g2 WA @5, g3 TLE @10, g4 AC @15 → 15 + 40; g5 never judged. B: never solved.
    assert res["solved"] == 1 and res["penalty_minutes"] == 55
    assert res["submissions_per_problem"] == {"A": 3, "B": 2}
    assert res["filtered_by_samples"] == {"A": 1, "B": 0} and res["generations_used"] == 7
    assert [r["candidate"] for r in res["log"] if r["problem"] == "A"] == ["g1", "g2", "g3", "g4"]
    capped = simulate_contest(cands[:5], judges.__getitem__, max_submissions_per_problem=1)
    assert capped["submissions_per_problem"] == {"A": 1} and capped["solved"] == 0
