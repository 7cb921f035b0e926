"""`recipe eval score`: existing responses in, per-item verdicts + summary out; malformed lines are reported with
their line number and not scored, every other line is."""
from __future__ import annotations

import json

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
    assert res.exit_code == 0, res.output
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


def test_unknown_suite_is_an_error(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text("{}\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", "nope", "--responses", str(f), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown suite 'nope'" in res.output and "aime25" in res.output
