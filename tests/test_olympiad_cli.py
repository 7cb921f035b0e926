"""``recipe eval score --suite ioi|icpc|imo-answer|imo-proof`` end to end: IOI and ICPC on
packages we write, the IMO suites through the harness's OpenAI-compatible client against a loopback judge."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _loopback_chat import loopback_chat
from olympiad_packages import write_kattis_maxpair, write_maxpair
from recipe.cli import app
from recipe.sandbox import probe

SOL = Path(__file__).parent / "fixtures" / "olympiad" / "maxpair_solutions"
needs_sandbox = pytest.mark.skipif(not probe().get("available") or shutil.which("g++") is None,
                                   reason="needs bubblewrap and g++ (make system-deps)")
runner = CliRunner()


def _invoke(args):
    r = runner.invoke(app, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output[r.output.index("{"):])


@needs_sandbox
def test_ioi_cli_writes_per_submission_and_task_scores(tmp_path):
    task = write_maxpair(tmp_path / "maxpair")
    subs = tmp_path / "subs"
    subs.mkdir()
    for n in ("overflow", "only_bigvals", "only_large"):
        shutil.copy(SOL / f"{n}.cpp", subs / f"{n}.cpp")
    (subs / "gen_text.md").write_text("My idea.\n```cpp\n" + (SOL / "first_pair.cpp").read_text() + "```\n")
    out = tmp_path / "out"
    summary = _invoke(["eval", "score", "--suite", "ioi", "--task", str(task), "--submissions", str(subs), "--out", str(out)])
    res = json.loads((out / "results.json").read_text())
    per = {s["file"]: (s["total"], {k: v["score"] for k, v in s["subtasks"].items()}) for s in res["submissions"]}
    assert per["overflow.cpp"] == (20, {"00-samples": 0, "01-small": 20, "02-bigvals": 0, "03-large": 0})
    assert per["only_bigvals.cpp"][0] == 30 and per["only_large.cpp"][0] == 50 and per["gen_text.md"][0] == 0
    assert res["task_score"] == 100 and res["oracle_upper_bound"] == 100 and res["submissions_used"] == 4
    assert summary["task_score"] == 100 and summary["submissions"]["only_large.cpp"]["total"] == 50
    assert json.loads((out / "submissions" / "overflow.cpp.json").read_text())["total"] == 20
    # --select: generations → legal submissions chosen on the public sample only; oracle reported apart
    sel = _invoke(["eval", "score", "--suite", "ioi", "--task", str(task), "--submissions", str(subs), "--out",
                   str(tmp_path / "sel"), "--select", "--oracle"])
    assert sel["generations"] == 4 and sel["submissions"] == 1 and sel["submitted"] == ["overflow.cpp"]
    assert sel["legal_score"] == 20 and sel["oracle_score"] == 100  # only overflow passes the public sample


def test_ioi_cli_refuses_communication_tasks(shared_dir, tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.cpp").write_text("int main(){}")
    r = runner.invoke(app, ["eval", "score", "--suite", "ioi", "--task", str(shared_dir / "fixtures/eval/ioi2024/sphinx"),
                            "--submissions", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    assert r.exit_code != 0 and "manager" in r.output


@needs_sandbox
def test_icpc_cli(tmp_path):
    probs = tmp_path / "problems"
    write_kattis_maxpair(probs / "A")
    subs = tmp_path / "subs"
    (subs / "A").mkdir(parents=True)
    shutil.copy(SOL / "first_pair.cpp", subs / "A" / "1.cpp")
    shutil.copy(SOL / "overflow.cpp", subs / "A" / "2.cpp")
    shutil.copy(SOL / "correct.cpp", subs / "A" / "3.cpp")
    s = _invoke(["eval", "score", "--suite", "icpc", "--problems", str(probs), "--submissions", str(subs),
                 "--out", str(tmp_path / "o"), "--profile", "tiny"])
    # 1.cpp fails the sample (not submitted); 2.cpp WA at minute 1; 3.cpp AC at minute 2 → 2 + 20
    assert (s["solved"], s["submissions_per_problem"], s["penalty_minutes"]) == (1, {"A": 2}, 22)


@pytest.fixture
def judge():
    """A loopback judge server answering its ``replies`` in turn."""
    with loopback_chat(lambda body: srv.replies[(len(srv.bodies) - 1) % len(srv.replies)]) as srv:
        srv.replies = []
        yield srv


def test_imo_answer_cli_with_loopback_judge(shared_dir, tmp_path, judge):
    imo = shared_dir / "fixtures/eval/imo_bench"
    import csv
    rows = [r for r in csv.DictReader(open(imo / "answerbench_v2.csv", newline="")) if r["Source"]][:2]
    lines = [{"Problem ID": rows[0]["Problem ID"], "response": f"<think>x</think>\\boxed{{{rows[0]['Short Answer'].strip('$')}}}"},
             {"Problem ID": rows[0]["Problem ID"], "response": "<think>x</think>no idea"},
             {"Problem ID": rows[1]["Problem ID"], "response": "<think>x</think>\\boxed{wrong thing}"},
             {"Problem ID": rows[1]["Problem ID"], "response": "<think>never closed"}]
    resp = tmp_path / "r.jsonl"
    resp.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    judge.replies = ["<thinking>...</thinking>\n\\boxed{Correct}", "<thinking>...</thinking>\n\\boxed{Incorrect}"]
    s = _invoke(["eval", "score", "--suite", "imo-answer", "--responses", str(resp), "--out", str(tmp_path / "o"),
                 "--data", str(imo), "--judge-prompt", str(imo / "prompts/nvidia_gym/answerbench_autograder_judge.yaml"),
                 "--judge-endpoint", judge.url, "--judge-model", "judge", "--profile", "tiny"])
    assert s["grading"] == {"precheck": 1, "judge": 2, "judge_invalid": 0, "no_answer": 1, "bad_response": 0}
    assert len(judge.bodies) == 2 and judge.bodies[0]["model"] == "judge" and judge.bodies[0]["temperature"] == 0.0
    # over all 399 well-formed problems: item means 1.0 and 0.0, the 397 without responses 0
    assert s["accuracy"] == pytest.approx(100 / 399) and s["k"] == 2 and s["n"] == 399 and s["n_missing"] == 397
    assert s["malformed_rows"][0]["id"] == "imo-bench-algebra-036"
    items = [json.loads(x) for x in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    got = {it["id"]: it["accuracy"] for it in items if not it.get("missing")}
    assert got == {rows[0]["Problem ID"]: 1.0, rows[1]["Problem ID"]: 0.0} and len(items) == 399


def test_imo_proof_cli_stores_every_grade(shared_dir, tmp_path, judge):
    imo = shared_dir / "fixtures/eval/imo_bench"
    resp = tmp_path / "p.jsonl"
    resp.write_text(json.dumps({"Problem ID": "PB-Basic-001", "response": "<think>x</think>A proof."}) + "\n"
                    + json.dumps({"Problem ID": "PB-Advanced-001", "response": "<think>x</think>Another proof."}) + "\n")
    judge.replies = ["<points>7 out of 7</points>", "<points>6 out of 7</points>", "<points>7 out of 7</points>",
                      "<points>0 out of 7</points>"]
    args = ["eval", "score", "--suite", "imo-proof", "--responses", str(resp), "--data", str(imo),
            "--judge-prompt", str(imo / "prompts/nvidia_gym/proofbench_judge.yaml"), "--judge-endpoint", judge.url,
            "--judge-model", "judge", "--profile", "tiny"]
    s = _invoke(args + ["--out", str(tmp_path / "o")])
    grades = [json.loads(x) for x in (tmp_path / "o" / "grades.jsonl").read_text().splitlines()]
    graded = [it for it in grades if not it.get("missing")]
    assert [[g["points"] for g in it["grades"]] for it in graded] == [[7, 6, 7, 0], [7, 6, 7, 0]]
    assert [it["score"] for it in graded] == [0.0, 0.0] and s["judge_samples"] == 4 and s["aggregation"] == "zero_if_any_zero"
    assert graded[0]["proof"] == "A proof." and s["n"] == 60 and s["n_missing"] == 58
    s = _invoke(args + ["--out", str(tmp_path / "m"), "--aggregation", "mean", "--samples", "3"])
    assert s["points_mean"] == pytest.approx((20 / 3 + (0 + 7 + 6) / 3) / 60)  # 58 missing proofs are 0


def test_rows_marked_non_thinking_are_graded_whole():
    from recipe.eval.olympiad.imo.imo_proof import visible_proof
    from recipe.eval.olympiad.score_suites import as_response
    assert visible_proof(as_response({"response": "A proof.", "thinking": False})) == "A proof."
    assert visible_proof(as_response({"response": "A proof."})) == ""  # thinking mode, no </think>: nothing graded
    with pytest.raises(ValueError, match="thinking"):
        as_response({"response": "x", "thinking": "no"})


def test_olympiad_options_are_refused_for_other_suites(tmp_path):
    r = runner.invoke(app, ["eval", "score", "--suite", "ifeval", "--responses", str(tmp_path / "r.jsonl"),
                            "--out", str(tmp_path / "o"), "--task", "T", "--select", "--judge-model", "j"])
    out = " ".join(r.output.split())
    assert r.exit_code == 2 and "--task --select: option(s) of the olympiad suites" in out and "--judge-model" not in out


def test_no_thinking_grades_an_unclosed_think_block_whole(shared_dir, tmp_path, judge):
    imo = shared_dir / "fixtures/eval/imo_bench"
    resp = tmp_path / "p.jsonl"
    resp.write_text(json.dumps({"Problem ID": "PB-Basic-001", "response": "<think>A proof."}) + "\n")
    judge.replies = ["<points>7 out of 7</points>"]
    args = ["eval", "score", "--suite", "imo-proof", "--responses", str(resp), "--data", str(imo),
            "--judge-prompt", str(imo / "prompts/nvidia_gym/proofbench_judge.yaml"), "--judge-endpoint", judge.url,
            "--judge-model", "judge", "--profile", "tiny", "--samples", "1"]
    assert _invoke(args + ["--out", str(tmp_path / "auto")])["judge_calls"] == 0  # auto: reasoning never ended
    s = _invoke(args + ["--out", str(tmp_path / "off"), "--no-thinking"])
    assert s["judge_calls"] == 1 and s["points_mean"] == pytest.approx(7 / 60)
