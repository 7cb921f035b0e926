"""ArenaHard v2 on the genuine rows (750 questions, split on \\n only: one holds a raw U+2028) and the genuine
o3-mini baseline answers: both positions judged, win rate with a bootstrap CI. The judge here is a rule written in
the test (it prefers the answer carrying a marker) standing in for GPT-4.1; the harness, templates, position swap and
verdict parsing are the real ones."""
from __future__ import annotations

import re

import pytest

from recipe.eval.benchmarks import arena_hard
from recipe.eval.benchmarks.suite_registry import RowError, get_suite
from recipe.eval.harness import summarize_verdicts
from recipe.eval.sources import read_rows

MARK = "GOODANSWER"


def _answers(user: str) -> tuple[str, str]:
    a = re.search(r"Assistant A's Answer\|>\n(.*?)\n<\|The End of Assistant A", user, re.S).group(1)
    b = re.search(r"Assistant B's Answer\|>\n(.*?)\n<\|The End of Assistant B", user, re.S).group(1)
    return a, b


def marker_judge(system: str, user: str) -> str:
    a, b = _answers(user)
    if (MARK in a) == (MARK in b):
        return "About equal. [[A=B]]"
    return "My final verdict: [[A>>B]]" if MARK in a else "My final verdict: [[B>A]]"


def always_a_judge(system: str, user: str) -> str:  # maximal position bias
    return "[[A>B]]"


@pytest.fixture()
def arena(shared_dir):
    root = shared_dir / "fixtures/eval/arena_hard_v2"
    rows = read_rows(root / "question.jsonl")
    base = arena_hard.baselines_from_answer_rows(read_rows(root / "model_answer/o3-mini-2025-01-31.sample25.jsonl"))
    yield rows, base
    arena_hard._STATE.update(judge=None, judge_name=None, baselines={})


def test_rows_and_baselines_are_genuine(arena):
    rows, base = arena
    assert len(rows) == 750 and sum(r["category"] == "hard_prompt" for r in rows) == 500
    assert any("\u2028" in r["prompt"] for r in rows)
    assert len(base) == 25 and set(base) <= {r["uid"] for r in rows}


def test_both_positions_win_rate_and_bootstrap_ci(arena):
    rows, base = arena
    arena_hard.configure(judge=marker_judge, judge_name="marker-rule", baselines=base)
    suite = get_suite("arena_hard_v2")
    with_base = [r for r in rows if r["uid"] in base][:8]
    verdicts = {}
    for i, r in enumerate(with_base):
        ours = f"{MARK} answer" if i < 6 else base[r["uid"]]  # 6 better, 2 identical to the baseline
        verdicts[r["uid"]] = [suite.score(r, f"<think>x</think>{ours}", True)]
    # ours as B wins weakly (1 battle), ours as A wins strongly (3 battles); identical answers tie (1 + 1)
    assert verdicts[with_base[0]["uid"]][0]["games"] == ["B>A", "A>>B"]
    assert verdicts[with_base[0]["uid"]][0]["battles"] == [1.0] * 4
    assert verdicts[with_base[7]["uid"]][0]["battles"] == [0.5, 0.5]
    s = summarize_verdicts(suite, verdicts)
    hard = s["win_rate_by_category"]["hard_prompt"]
    assert hard["win_rate"] == pytest.approx(100 * (6 * 4 + 0.5 * 2 * 2) / (6 * 4 + 2 * 2)) and hard["battles"] == 28
    lo, hi = hard["ci90_bootstrap"]
    assert lo < hard["win_rate"] <= hi <= 100 and s["judge"] == "marker-rule" and suite.judge == "marker-rule"
    assert s["headline"] is None and s["score"] is None  # no creative-writing rows: no paper headline
    # a judge that always picks position A gives exactly 0.5 per item once both orders are judged
    arena_hard.configure(judge=always_a_judge, judge_name="always-a")
    v = suite.score(with_base[0], f"<think>x</think>{MARK}", True)
    assert v["games"] == ["A>B", "A>B"] and v["battles"] == [1.0, 0.0] and v["score"] == 0.5
    # unclosed thinking: no answer, a loss in both games
    assert suite.score(with_base[0], f"<think>{MARK}", True)["no_answer"]


def test_missing_baseline_is_reported(arena):
    rows, base = arena
    arena_hard.configure(judge=marker_judge, baselines=base)
    creative = next(r for r in rows if r["category"] == "creative_writing" and r["uid"] not in base)
    with pytest.raises(RowError, match="no baseline answer"):
        get_suite("arena_hard_v2").score(creative, "answer", False)


def test_score_cli_without_a_judge_is_one_clear_error(arena, tmp_path):
    import json

    from typer.testing import CliRunner

    from recipe.cli import app
    rows, base = arena
    f = tmp_path / "r.jsonl"
    f.write_text("\n".join(json.dumps(dict(r, response="x")) for r in rows[:3]) + "\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", "arena_hard_v2", "--responses", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "needs a judge" in res.output
