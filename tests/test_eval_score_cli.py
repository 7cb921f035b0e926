"""`recipe eval score`: existing responses in, per-item verdicts + summary out; malformed lines are reported with
their line number and not scored, every other line is, and the command exits 1 (0 with --allow-malformed); the
thinking rule defaults to auto, so a plain-text answer from a non-reasoning system scores."""
from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from recipe.cli import app
from recipe.eval.sources import read_rows


def test_score_file_reports_malformed_lines_and_scores_the_rest(shared_dir, tmp_path):
    rows = read_rows(shared_dir / "fixtures/eval/aime25/test.txt")[:3]
    lines = [
        json.dumps(dict(rows[0], response=f"<think>t</think>\\boxed{{{rows[0]['expected_answer']}}}")),  # 1: right
        json.dumps(dict(rows[0], response="<think>t</think>\\boxed{1}")),                                # 2: wrong
        "{not json",                                                                                      # 3
        json.dumps({"id": "aime25-1", "response": "x"}),                                                  # 4: no gold
        json.dumps(dict(rows[1], response="<think>never closed \\boxed{1}")),                             # 5: no answer
        "",
        json.dumps(dict(rows[2], response=f"\\boxed{{{rows[2]['expected_answer']}}}", thinking=False)),  # 7: right
        json.dumps(dict(rows[2], response=["not", 3], thinking=False)),                                   # 8: bad response
    ]
    f = tmp_path / "responses.jsonl"
    f.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", "aime25", "--responses", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output  # malformed lines: non-zero, after writing every good line's verdict
    assert "3 malformed line(s)" in res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [m["line"] for m in summary["malformed"]] == [3, 4, 8]
    assert "expected_answer" in summary["malformed"][1]["error"]
    assert summary["lines_scored"] == 4 and summary["n"] == 3
    items = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "o" / "items.jsonl").read_text().splitlines()}
    assert [s["score"] for s in items["aime25-0"]["samples"]] == [1.0, 0.0]
    assert items["aime25-1"]["samples"][0]["no_answer"] is True
    assert items["aime25-2"]["samples"][0]["score"] == 1.0
    # item means 0.5, 0, 1 -> 50.0; no-answer 1 of 4 samples
    assert summary["score"] == 50.0 and summary["no_answer_rate"] == 25.0 and summary["k"] == 1
    assert [m["kind"] for m in summary["malformed"]] == ["not_json", "row", "row"]
    again = CliRunner().invoke(app, ["eval", "score", "--suite", "aime25", "--responses", str(f), "--out",
                                     str(tmp_path / "o2"), "--allow-malformed"])
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["score"] == 50.0


def test_unknown_suite_is_an_error(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text("{}\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", "nope", "--responses", str(f), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown suite 'nope'" in res.output and "aime25" in res.output


def _score(tmp_path, suite, lines, *extra):
    f = tmp_path / "responses.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", suite, "--responses", str(f), "--out",
                                   str(tmp_path / "o"), *extra])
    summary = json.loads((tmp_path / "o" / "summary.json").read_text()) if (tmp_path / "o" / "summary.json").exists() else None
    return res, summary


AIME_ROW = {"id": "aime25-0", "problem": "Find the sum of all integer bases b > 9 ...", "expected_answer": "70"}


def test_plain_text_aime_answer_scores_by_default(tmp_path):
    res, s = _score(tmp_path, "aime25", [dict(AIME_ROW, response="The answer is \\boxed{70}.")])
    assert res.exit_code == 0, res.output
    assert s["score"] == 100.0 and s["no_answer_rate"] == 0.0 and s["settings"]["thinking"] == "auto"


@pytest.mark.parametrize("mode,score", [("auto", 100.0), ("off", 100.0), ("on", 0.0)])
def test_thinking_option(tmp_path, mode, score):
    res, s = _score(tmp_path, "aime25", [dict(AIME_ROW, response="The answer is \\boxed{70}.")], "--thinking", mode)
    assert res.exit_code == 0, res.output
    assert s["score"] == score and s["settings"]["thinking"] == mode


def test_a_line_s_own_thinking_field_wins(tmp_path):
    lines = [dict(AIME_ROW, response="The answer is \\boxed{70}.", thinking="on"),
             dict(AIME_ROW, response="<think>\\boxed{70}</think>", thinking=False)]
    res, s = _score(tmp_path, "aime25", lines, "--thinking", "auto")
    items = [json.loads(x) for x in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert [v["score"] for v in items[0]["samples"]] == [0.0, 1.0]
    bad, _ = _score(tmp_path, "aime25", [dict(AIME_ROW, response="x", thinking="sometimes")])
    assert bad.exit_code == 1 and "thinking" in bad.output


def test_bad_thinking_option_is_a_usage_error(tmp_path):
    res, _ = _score(tmp_path, "aime25", [dict(AIME_ROW, response="x")], "--thinking", "maybe")
    assert res.exit_code == 2 and "auto, on, off" in res.output


def test_unknown_instruction_id_exits_non_zero_after_scoring_the_rest(tmp_path):
    good = {"key": 1, "prompt": "Answer without commas.", "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}], "response": "No commas here at all"}
    unknown = dict(good, key=2, instruction_id_list=["punctuation:no_comma", "made_up:never_heard_of"], kwargs=[{}, {}])
    res, s = _score(tmp_path, "ifeval", [good, unknown])
    assert res.exit_code == 1, res.output
    assert s["malformed"] == [{"line": 2, "kind": "unknown_instruction_id",
                               "error": "unknown instruction id(s) ['made_up:never_heard_of']: no checker"}]
    assert s["lines_scored"] == 1 and s["score"] == 100.0
    ok, _ = _score(tmp_path, "ifeval", [good, unknown], "--allow-malformed")
    assert ok.exit_code == 0, ok.output


def test_unknown_instruction_id_in_a_tiny_record_is_malformed(tmp_path):
    row = {"id": "if1", "messages": [{"role": "user", "content": "Say hi without commas."}],
           "verifier": {"name": "instruction_following", "instruction_id_list": ["made_up:never_heard_of"],
                        "kwargs": [{}]}, "response": "hi"}
    res, s = _score(tmp_path, "tiny_instruction_following", [row])
    assert res.exit_code == 1 and s["malformed"][0]["kind"] == "unknown_instruction_id" and s["lines_scored"] == 0
