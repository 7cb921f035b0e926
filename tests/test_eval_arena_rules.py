"""ArenaHard v2 as arena-hard-auto scores it, rule by rule, with rows, answers and judges written here: the judge
prompt of each category, strong verdicts weighed 3 times, null judgments dropped, creative writing against its own
baseline, and the paper's headline (the mean of the hard-prompt and creative-writing win rates, each with its CI)."""
from __future__ import annotations

import pytest
import yaml

from recipe.config import load_config
from recipe.eval.benchmarks import arena_hard
from recipe.eval.benchmarks.arena_hard_judge import (CREATIVE_SYSTEM, HARD_PROMPT_SYSTEM, battles, parse_label,
                                                     win_rates)
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.harness import summarize_verdicts

HARD = {"uid": "h1", "category": "hard_prompt", "prompt": "Sort a list in Python."}
CREATIVE = {"uid": "c1", "category": "creative_writing", "prompt": "A haiku about rain."}
BASE = {"h1": "sorted(xs)", "c1": "Rain falls on the roof"}


class ScriptedJudge:
    """Replies with the given verdict per position (ours as B, then ours as A) and records the system prompts."""

    def __init__(self, base_first: str, ours_first: str):
        self.replies = {False: base_first, True: ours_first}
        self.systems = []

    def __call__(self, system: str, user: str) -> str:
        self.systems.append(system)
        ours_first = "OURS" in user.split("Assistant A's Answer|>", 1)[1].split("<|The End of Assistant A", 1)[0]
        return f"My final verdict: {self.replies[ours_first]}"


@pytest.fixture(autouse=True)
def _reset():
    yield
    arena_hard._STATE.update(judge=None, judge_name=None, baselines={})


def _score(row, judge, answer="OURS answer"):
    arena_hard.configure(judge=judge, judge_name="scripted", baselines=BASE)
    return get_suite("arena_hard_v2").score(row, f"<think>x</think>{answer}", True)


def test_each_category_has_its_judge_prompt():
    assert "generating your own answer" in HARD_PROMPT_SYSTEM and "with your answer" in HARD_PROMPT_SYSTEM
    assert "own answer" not in CREATIVE_SYSTEM and "[[B>>A]]" in CREATIVE_SYSTEM
    for row, system in ((HARD, HARD_PROMPT_SYSTEM), (CREATIVE, CREATIVE_SYSTEM)):
        judge = ScriptedJudge("[[A=B]]", "[[A=B]]")
        _score(row, judge)
        assert judge.systems == [system, system]


def test_prompts_equal_nemo_gym_ports_of_the_reference(shared_dir):
    root = shared_dir / "fixtures/eval/arena_hard_v2/prompts/nvidia_gym"
    assert yaml.safe_load((root / "arena.yaml").read_text())["system"] == HARD_PROMPT_SYSTEM
    assert yaml.safe_load((root / "arena_creative.yaml").read_text())["system"] == CREATIVE_SYSTEM


def test_labels_are_read_as_the_reference_reads_them():
    assert parse_label("so [[a>>b]]") == "A>>B"  # the judgment is upper-cased first
    assert parse_label("[[A>B]] then [[B>A]]") == "B>A"  # the last match
    assert parse_label("[B=A] only") == "B=A"  # the second regex when the first finds nothing
    assert parse_label("[[A>B>A]]") is None and parse_label("no label") is None


def test_strong_verdicts_weigh_three_battles():
    # baseline as A wins weakly (one battle lost), ours as A wins strongly (three battles won)
    v = _score(HARD, ScriptedJudge("[[A>B]]", "[[A>>B]]"))
    assert v["battles"] == [1.0, 1.0, 1.0, 0.0] and v["score"] == 0.75
    assert battles("B<<A", "A<B") == [0.0, 0.0, 0.0, 0.0]  # mirrored spellings weigh the same


def test_null_judgments_are_dropped_not_half():
    v = _score(HARD, ScriptedJudge("no verdict at all", "[[A>>B]]"))
    assert v["battles"] is None and v["reason"] == "null_judgment"
    win = _score(dict(HARD, uid="h2", baseline_answer="sorted(xs)"), ScriptedJudge("[[B>A]]", "[[A>B]]"))
    rates = win_rates([v, win])["subsets"]["hard_prompt"]
    assert rates["win_rate"] == 100.0 and rates["battles"] == 2 and rates["null_judgments"] == 1


def test_creative_writing_is_judged_against_its_own_baseline():
    cfg = load_config("paper").benchmarks.suites["arena_hard_v2"]
    assert set(cfg.baselines) == {"hard_prompt", "creative_writing"}
    assert "gemini-2.0-flash-001" in cfg.baselines["creative_writing"].file
    assert "o3-mini" in cfg.baselines["hard_prompt"].file
    v = _score(CREATIVE, ScriptedJudge("[[B>A]]", "[[A>B]]"))
    assert v["category"] == "creative_writing" and v["battles"] == [1.0, 1.0]
    # rows whose baseline could not be loaded are left out before generation, with the reason
    arena_hard.configure(baselines={"h1": "sorted(xs)"})
    rows, left = arena_hard.rows_with_baselines([HARD, CREATIVE])
    assert rows == [HARD] and "gemini-2.0-flash-001" in left["creative_writing"]


def test_headline_is_the_mean_of_the_two_subsets_each_with_its_ci():
    verdicts = {}
    for i in range(6):  # hard prompts: 5 strong wins and a weak loss; creative: 2 ties, 4 weak losses
        verdicts[f"h{i}"] = [_score(dict(HARD, uid=f"h{i}", baseline_answer="b"), ScriptedJudge("[[B>>A]]", "[[A>>B]]") if i < 5
                                    else ScriptedJudge("[[A>B]]", "[[B>A]]"))]
        verdicts[f"c{i}"] = [_score(dict(CREATIVE, uid=f"c{i}", baseline_answer="b"), ScriptedJudge("[[A=B]]", "[[A=B]]") if i < 2
                                    else ScriptedJudge("[[A>B]]", "[[B>A]]"))]
    s = summarize_verdicts(get_suite("arena_hard_v2"), verdicts)
    hard, creative = (s["win_rate_by_category"][c] for c in ("hard_prompt", "creative_writing"))
    assert hard["win_rate"] == pytest.approx(100 * 30 / 32) and creative["win_rate"] == pytest.approx(100 * 2 / 12, abs=1e-3)
    assert s["score"] == pytest.approx((hard["win_rate"] + creative["win_rate"]) / 2, abs=1e-3)
    for sub in (hard, creative, s["headline"]):
        lo, hi = sub["ci90_bootstrap"]
        assert lo <= sub["win_rate"] <= hi and sub["stderr_bootstrap"] > 0
