"""IOI scoring: arithmetic on hand-computed cases, packages, sandboxed judging end to end on
our own ``maxpair`` batch package and the official ``aplusb`` data with our own grader/checker, selection rules."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from olympiad_packages import write_maxpair
from recipe.eval.olympiad.ioi import IOIJudge, PackageError, UnsupportedTask, extract_cpp, load_task
from recipe.eval.olympiad.ioi.ioi_package import Subtask
from recipe.eval.olympiad.ioi.ioi_contest_report import contest_report, medal_for
from recipe.eval.olympiad.ioi.ioi_scoring import subtask_score, submission_subtask_scores, task_score, worst_status
from recipe.eval.olympiad.ioi.selection import (Candidate, LegalSelector, SubmissionBudget, SubmissionCapReached,
                                               legal_score,
                                               oracle_score)
from recipe.sandbox import probe

pytestmark = pytest.mark.starts_first(rank=4)  # builds and judges every submission once (module fixture)
HERE = Path(__file__).parent / "fixtures" / "olympiad"
needs_sandbox = pytest.mark.skipif(not probe().get("available") or shutil.which("g++") is None,
                                   reason="needs bubblewrap and g++ (make system-deps)")


# --- arithmetic -------------------------------------------------------------------------------
def test_subtask_is_min_over_tests_times_points_rounded():
    assert subtask_score([1, 1, 0.5], 30) == 15.0
    assert subtask_score([1, 0.333333], 7, precision=2) == 2.33
    assert subtask_score([1, 1], 0) == 0.0
    with pytest.raises(ValueError):
        subtask_score([], 10)
    with pytest.raises(ValueError):
        subtask_score([1.5], 10)


def test_task_score_sums_best_per_subtask_not_best_total():
    sts = [Subtask("a", 20, ("t1",)), Subtask("b", 30, ("t2",)), Subtask("c", 50, ("t3",))]
    subs = [{"a": 20, "b": 0, "c": 0}, {"a": 0, "b": 30, "c": 0}, {"a": 0, "b": 0, "c": 50}]
    assert task_score(subs, sts) == 100.0  # best single total is 50
    assert task_score([], sts) == 0.0


def test_missing_test_only_allowed_after_a_zero():
    sts = [Subtask("a", 10, ("t1", "t2"))]
    assert submission_subtask_scores(sts, {"t1": 0.0}) == {"a": 0.0}
    with pytest.raises(ValueError, match="no score"):
        submission_subtask_scores(sts, {"t1": 1.0})


def test_worst_status_order():
    assert worst_status(["OK", "PA", "TLE"]) == "TLE"
    assert worst_status(["OK", "WA", "MLE"]) == "WA"
    assert worst_status(["OK", "OK"]) == "OK"


def test_extract_last_cpp_block():
    text = "idea\n```cpp\nint a;\n```\nbetter:\n```cpp\nint b;\n```"
    assert extract_cpp(text).strip() == "int b;"
    assert extract_cpp("```python\nprint(1)\n```") is None
    assert extract_cpp("int main(){}") == "int main(){}"


# --- real packages: format, communication tasks ------------------------------------------------
def test_real_packages_load(shared_dir):
    root = shared_dir / "fixtures/eval/ioi2024"
    sph = load_task(root / "sphinx")
    assert (sph.time_limit_s, sph.memory_limit_mb, sph.task_type) == (1.5, 2048, "Communication")
    assert [s.points for s in sph.subtasks] == [0, 3, 7, 33, 21, 36] and sph.max_score == 100
    assert len(sph.tests) == 86 and len(sph.subtask("05-full").tests) == 86
    msg = load_task(root / "message")
    assert msg.task_type == "Communication" and [s.points for s in msg.subtasks] == [0, 10, 90]
    # problem.json carries task_type_params as a JSON string: read as a dict (grader_compilation looks into it)
    assert msg.task_type_params == {"task_type_parameters_Communication_num_processes": 2}
    for pkg in (sph, msg):
        assert "manager" in pkg.unsupported_reason()
        with pytest.raises(UnsupportedTask):
            IOIJudge(pkg)
    apb = load_task(root / "aplusb")
    assert apb.grader_compilation and "grader.cpp" in apb.unsupported_reason()
    assert [(s.name, s.tests) for s in apb.subtasks if s.public] == [("00-samples", ("0-01", "0-02"))]


def test_communication_scoring_from_synthetic_verdicts(shared_dir):
    """message/sphinx: per-test scores a manager would give → subtask and task scores."""
    root = shared_dir / "fixtures/eval/ioi2024"
    sph = load_task(root / "sphinx")
    # 50% partial ("same colour" pattern) on every test, full marks on the N2 and chain tests.
    full = set(sph.subtask("01-N2").tests) | set(sph.subtask("03-chain").tests)
    per_test = {t: (1.0 if t in full else 0.5) for t in sph.tests}
    scores = submission_subtask_scores(sph.subtasks, per_test, sph.score_precision)
    assert scores == {"00-samples": 0.0, "01-N2": 3.0, "02-N50": 3.5, "03-chain": 33.0, "04-complete": 10.5, "05-full": 18.0}
    # a second submission fully solving 04-complete only: task = best per subtask.
    second = {t: (1.0 if t in sph.subtask("04-complete").tests else 0.0) for t in sph.tests}
    s2 = submission_subtask_scores(sph.subtasks, second)
    assert task_score([scores, s2], sph.subtasks) == 3 + 3.5 + 33 + 21 + 18
    msg = load_task(root / "message")
    # message: partial score from the packet count, e.g. 0.9^k per test; subtask takes the worst test.
    per = {t: 1.0 for t in msg.tests}
    worst = msg.subtask("02-full").tests[3]
    per[worst] = round(0.9 ** 3, 6)
    got = submission_subtask_scores(msg.subtasks, per, msg.score_precision)
    assert got["02-full"] == round(0.729 * 90, 2) == 65.61
    assert got["01-len64"] == (10.0 if worst not in msg.subtask("01-len64").tests else 7.29)


def test_bad_package_errors(tmp_path):
    with pytest.raises(PackageError, match="problem.json"):
        load_task(tmp_path)
    pkg = write_maxpair(tmp_path / "p")
    (pkg / "subtasks" / "09-bad.json").write_text(json.dumps({"score": 5, "testcases": ["nope"]}))
    with pytest.raises(PackageError, match="nope"):
        load_task(pkg)


# --- end to end in the sandbox ----------------------------------------------------------------
@pytest.fixture(scope="module")
def maxpair(tmp_path_factory):
    pkg = load_task(write_maxpair(tmp_path_factory.mktemp("ioi") / "maxpair"))
    return pkg, IOIJudge(pkg)


@pytest.fixture(scope="module")
def maxpair_results(maxpair):
    _, judge = maxpair
    out = {}
    for f in sorted((HERE / "maxpair_solutions").glob("*.cpp")):
        if not f.stem.startswith("hostile"):
            out[f.stem] = judge.evaluate(f.read_text(), f.name)
    return out


EXPECTED = {  # subtask scores (00-samples, 01-small 20, 02-bigvals 30, 03-large 50), worst statuses
    "correct": ((0, 20, 30, 50), ("OK", "OK", "OK", "OK")),
    "overflow": ((0, 20, 0, 0), ("OK", "OK", "WA", "WA")),
    "slow": ((0, 20, 30, 0), ("OK", "OK", "OK", "TLE")),
    "only_bigvals": ((0, 0, 30, 0), ("WA", "WA", "OK", "TLE")),
    "only_large": ((0, 0, 0, 50), ("WA", "WA", "WA", "OK")),
    "first_pair": ((0, 0, 0, 0), ("WA", "WA", "WA", "WA")),
    "crash": ((0, 0, 0, 0), ("RE",) * 4),
    "loop": ((0, 0, 0, 0), ("TLE",) * 4),
    "memory_hog": ((0, 0, 0, 0), ("MLE",) * 4),
    "compile_error": ((0, 0, 0, 0), ("CE",) * 4),
}


@needs_sandbox
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_maxpair_verdicts_and_subtask_points(maxpair_results, name):
    r = maxpair_results[name]
    scores, statuses = EXPECTED[name]
    assert tuple(v["score"] for v in r.subtasks.values()) == scores
    assert tuple(v["status"] for v in r.subtasks.values()) == statuses
    assert r.total == sum(scores)


@needs_sandbox
def test_different_subtask_submissions_sum_per_subtask_bests(maxpair, maxpair_results):
    pkg, _ = maxpair
    subs = [maxpair_results[n].subtask_scores() for n in ("overflow", "only_bigvals", "only_large")]
    assert max(sum(s.values()) for s in subs) == 50
    assert task_score(subs, pkg.subtasks) == 100


@needs_sandbox
def test_partial_checker_gives_partial_scores(tmp_path):
    pkg = load_task(write_maxpair(tmp_path / "maxpair", partial_checker=True))
    judge = IOIJudge(pkg)
    r = judge.evaluate((HERE / "maxpair_solutions" / "first_pair.cpp").read_text(), "first_pair.cpp")
    assert {t: v.verdict for t, v in r.tests.items()} == {t: "PA" for t in r.tests}
    assert [v["score"] for v in r.subtasks.values()] == [0, 10, 15, 25] and r.total == 50
    compiles = []
    real = judge._compile
    judge._compile = lambda s, src: compiles.append(1) or real(s, src)
    ok = judge.evaluate((HERE / "maxpair_solutions" / "correct.cpp").read_text(), "correct.cpp", public_only=True)
    assert ok.scope == "public" and list(ok.subtasks) == ["00-samples"] and set(ok.tests) == {"sample-01"}
    full = judge.evaluate((HERE / "maxpair_solutions" / "correct.cpp").read_text(), "again.cpp")
    assert full.total == 100 and len(compiles) == 1  # public check and submission share one compilation


@needs_sandbox
def test_aplusb_official_data_with_our_grader(shared_dir):
    pkg = load_task(shared_dir / "fixtures/eval/ioi2024/aplusb", support=HERE / "aplusb_support")
    judge = IOIJudge(pkg)
    sols = HERE / "aplusb_solutions"
    res = {f.stem: judge.evaluate(f.read_text(), f.name) for f in sorted(sols.glob("*.cpp"))}
    assert res["correct"].total == 100 and all(t.verdict == "OK" for t in res["correct"].tests.values())
    assert res["ignores_b"].subtask_scores() == {"00-samples": 0, "01-smallAB": 0, "02-bZero": 30, "03-full": 0}
    assert res["prints_itself"].total == 0  # secret-token check of the checker
    assert judge.describe()["solution_flags"] == ["-DEVAL", "-std=gnu++17", "-O2", "-pipe", "-s"]


@needs_sandbox
def test_hostile_submission_gets_a_verdict_and_leaves_nothing(maxpair, tmp_path, monkeypatch):
    import os
    import tempfile
    import time

    from recipe.sandbox import bwrap_runner as runner
    pkg, judge = maxpair
    # the uids of the sessions this test opens; another xdist worker's sandbox runs under uids of the same range
    used_uids: list[int] = []
    real_init = runner.Session.__init__

    def recording_init(self, *a, **k):
        real_init(self, *a, **k)
        used_uids.append(self.uid)
    monkeypatch.setattr(runner.Session, "__init__", recording_init)
    # a private temp root: other tests running in parallel (-n 2) create and remove their own sandbox dirs in /tmp
    private = Path(tempfile.mkdtemp(prefix="ioi-hostile-", dir="/tmp"))
    os.chmod(private, 0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    before = set()
    t = time.monotonic()  # baseline on this machine, now: a compile and every test of a correct submission
    assert judge.evaluate((HERE / "maxpair_solutions" / "correct.cpp").read_text(), "baseline.cpp").total == 100
    baseline_s = time.monotonic() - t
    t = time.monotonic()
    r = judge.evaluate((HERE / "maxpair_solutions" / "hostile.cpp").read_text(), "hostile.cpp")
    # at most one run per subtask reaches its hard wall limit (stop at the first zero), plus what a correct one costs
    assert time.monotonic() - t < len(pkg.subtasks) * judge.limits.wall_s + 2 * baseline_s + 1
    assert r.total == 0 and r.subtasks["00-samples"]["status"] in ("TLE", "RE")
    assert set(private.glob("recipe-sbx-*")) <= before  # work dirs removed
    assert r.isolation == {"mode": "bubblewrap", "leftover_processes": 0}
    probe_res = judge.evaluate((HERE / "maxpair_solutions" / "hostile_probe.cpp").read_text(), "probe", public_only=True)
    assert probe_res.tests["sample-01"].verdict == "OK"  # it could not read outside its dir nor connect
    assert not list(private.glob("recipe-sbx-*"))
    assert used_uids, "the judge opened no sandbox session"
    if os.geteuid() == 0:  # own uids only when root; otherwise every run shares ours and this check is meaningless
        assert all(u is not None for u in used_uids)
        assert not any(runner._uid_processes(u) for u in used_uids), "a process of a sandbox uid outlived the verdict"


# --- selection ---------------------------------------------------------------------------------
@needs_sandbox
def test_legal_selection_caps_and_never_sees_hidden_results(maxpair):
    pkg, judge = maxpair
    sol = {f.stem: f.read_text() for f in (HERE / "maxpair_solutions").glob("*.cpp")}
    cands = [Candidate("c_overflow", sol["overflow"], "01-small"), Candidate("c_slow", sol["slow"], "02-bigvals"),
             Candidate("c_crash", sol["crash"], "03-large"), Candidate("c_only_large", sol["only_large"], "03-large")]
    public = {c.name: judge.evaluate(c.source, c.name, public_only=True) for c in cands}
    public_tests = {t for s in pkg.subtasks if s.public for t in s.tests}
    assert public_tests and all(r.scope == "public" and set(r.tests) <= public_tests for r in public.values())
    sel = LegalSelector(pkg.subtasks)
    order = [c.name for c in sel.order(cands, public)]
    assert order == ["c_overflow", "c_slow"]  # crash and only_large fail the public sample
    evaluated = []
    budget = SubmissionBudget(lambda c: evaluated.append(c.name) or judge.evaluate(c.source, c.name), cap=2)
    submitted = sel.run(cands, public, budget)
    assert budget.used == len(submitted) == 2 and evaluated == submitted
    assert legal_score(budget, pkg.subtasks)[0] == 50.0
    with pytest.raises(SubmissionCapReached):
        budget.submit(cands[0])
    with pytest.raises(ValueError):
        SubmissionBudget(lambda c: None, cap=51)


def test_selection_order_ignores_hidden_outcomes():
    """Same public results, different hidden truth → identical order (the selector has no hidden input)."""
    from recipe.eval.olympiad.ioi.ioi_judge import SubmissionResult, TestResult
    sts = [Subtask("00-samples", 0, ("s",)), Subtask("01", 40, ("a",)), Subtask("02", 60, ("b",))]
    cands = [Candidate(f"g{i}", "x" * (10 - i), "01" if i % 2 else "02") for i in range(6)]
    public = {c.name: SubmissionResult(c.name, True, {"s": TestResult("OK", 1.0, 0.0)}, scope="public") for c in cands}
    public["g3"] = SubmissionResult("g3", True, {"s": TestResult("WA", 0.0, 0.0)}, scope="public")
    sel = LegalSelector(sts)
    order = [c.name for c in sel.order(cands, public)]
    assert order == ["g5", "g4", "g1", "g2", "g0"]  # round-robin 01/02, shortest first, g3 dropped

    def fake_hidden(solves):
        return lambda c: SubmissionResult(c.name, True, subtasks={k: {"score": v if c.name in solves else 0.0}
                                                                   for k, v in (("00-samples", 0), ("01", 40), ("02", 60))})
    b1, b2 = SubmissionBudget(fake_hidden({"g5"})), SubmissionBudget(fake_hidden({"g0"}))
    s1, s2 = sel.run(cands, public, b1), sel.run(cands, public, b2)
    assert s1[0] == s2[0] == "g5"
    assert s1 == ["g5"]  # g5 solved everything: counted feedback says stop
    assert s2 == order  # nothing solved until the last one
    assert oracle_score(b2.results, sts) == 100


def test_report_keeps_legal_and_oracle_apart():
    tasks = {f"t{i}": {"legal_score": 70.0, "oracle_score": 90.0, "generations": 100, "submissions": 20, "max_score": 100}
             for i in range(6)}
    rep = contest_report(tasks, 2025)
    assert rep["legal_score"] == 420.0 and rep["oracle_upper_bound"] == 540.0
    assert rep["legal_medal"] is None and rep["margin_to_gold"] == round(420 - 438.3, 2)
    assert (rep["generations_used"], rep["submissions_used"]) == (600, 120)
    assert medal_for(440, {"gold": 438.3}) == "gold"
