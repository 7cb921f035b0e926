"""The thinking rule in its three modes (``recipe.eval.thinking``), the same on AIME/HMMT, IMO-AnswerBench's
rule-based pre-check and the tiny math domain: auto removes a closed think block, an unclosed block is no answer,
a text without think tags is the answer whole; on needs ``</think>``; off grades everything."""
from __future__ import annotations

import pytest

from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.olympiad.imo.imo_answer import grade_response
from recipe.eval.thinking import thinking_flag

ROW = {"id": "aime25-0", "problem": "What is 7 * 10?", "expected_answer": "70"}
IMO_ROW = {"Problem ID": "imo-bench-algebra-001", "Problem": "Find 7 * 10.", "Short Answer": "70"}
TINY_ROW = {"id": "m1", "messages": [{"role": "user", "content": "What is 63+7?"}],
            "verifier": {"name": "math", "expected_answer": "70"}}

PLAIN = "The answer is \\boxed{70}."
CLOSED = "<think>maybe \\boxed{7}</think>The answer is \\boxed{70}."
CLOSED_ANSWER_INSIDE = "<think>so \\boxed{70}</think>I am done."
UNCLOSED = "<think>it is \\boxed{70}, let me check"
CLOSE_ONLY = "reasoning after a template-opened block \\boxed{7}</think>\\boxed{70}"

# response -> (correct?, no answer?) per mode
EXPECTED = {
    "auto": {PLAIN: (True, False), CLOSED: (True, False), CLOSED_ANSWER_INSIDE: (False, True),
             UNCLOSED: (False, True), CLOSE_ONLY: (True, False)},
    "on": {PLAIN: (False, True), CLOSED: (True, False), CLOSED_ANSWER_INSIDE: (False, True),
           UNCLOSED: (False, True), CLOSE_ONLY: (True, False)},
    "off": {PLAIN: (True, False), CLOSED: (True, False), CLOSED_ANSWER_INSIDE: (True, False),
            UNCLOSED: (True, False), CLOSE_ONLY: (True, False)},
}


def test_flag_spellings():
    assert [thinking_flag(x) for x in ("auto", "on", "off", "ON", None, True, False)] == [None, True, False, True, None,
                                                                                         True, False]
    with pytest.raises(ValueError, match="auto, on, off"):
        thinking_flag("maybe")


@pytest.mark.parametrize("mode", sorted(EXPECTED))
@pytest.mark.parametrize("suite", ["aime25", "hmmt_feb25"])
def test_math_suites(mode, suite):
    s = get_suite(suite)
    row = ROW if suite == "aime25" else {"problem_idx": 1, "problem": ROW["problem"], "answer": "70"}
    for response, (correct, none) in EXPECTED[mode].items():
        v = s.score(row, response, thinking_flag(mode))
        assert (v["score"] == 1.0, v["no_answer"]) == (correct, none), (mode, response, v)


class _Judge:
    """Says Incorrect and counts its calls: reached only when the pre-check does not settle the answer."""

    def __init__(self):
        self.calls = 0

    def complete(self, messages, **sampling):
        self.calls += 1
        return "<thinking>no</thinking>\\boxed{Incorrect}"


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_imo_answer_precheck(mode):
    from recipe.eval.olympiad.judge_prompts import PromptTemplate
    prompt = PromptTemplate("{problem} {predicted_answer} {expected_answer}", None, "test", "")
    for response, (correct, none) in EXPECTED[mode].items():
        judge = _Judge()
        g = grade_response(IMO_ROW, response, judge, prompt, thinking=thinking_flag(mode))
        if correct:  # the rule-based pre-check settles it, no judge call
            assert g["correct"] and g["how"] == "precheck" and judge.calls == 0, (mode, response, g)
        elif response in (UNCLOSED, PLAIN):  # nothing visible to grade: incorrect without a judge call
            assert not g["correct"] and g["how"] == "no_answer" and judge.calls == 0, (mode, response, g)
        else:  # a visible answer without a box goes to the judge
            assert not g["correct"] and g["how"] == "judge" and judge.calls == 1, (mode, response, g)


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_tiny_math(mode):
    s = get_suite("tiny_math")
    for response, (correct, none) in EXPECTED[mode].items():
        v = s.score(TINY_ROW, response, thinking_flag(mode))
        assert (v["score"] == 1.0, v["no_answer"]) == (correct, none), (mode, response, v)


def test_tiny_math_reads_the_last_box_like_aime():
    s = get_suite("tiny_math")
    assert s.score(TINY_ROW, "\\boxed{70} and \\boxed{7", None)["no_answer"]
    assert s.score(TINY_ROW, "\\boxed 70", None)["score"] == 1.0


@pytest.mark.parametrize("flag,how", [([], "precheck"), (["--thinking", "auto"], "precheck"),
                                      (["--thinking", "off"], "precheck"), (["--thinking", "on"], "no_answer"),
                                      (["--no-thinking"], "precheck")])
def test_imo_answer_cli_thinking_option(shared_dir, tmp_path, flag, how):
    """``recipe eval score --suite imo-answer`` forwards --thinking; a plain boxed answer needs no judge in auto/off."""
    import json

    from typer.testing import CliRunner

    from recipe.cli import app
    from recipe.eval.olympiad.imo.imo_answer import load_answerbench
    imo = shared_dir / "fixtures/eval/imo_bench"
    row = load_answerbench(imo, "v2").rows[0]
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"Problem ID": row["Problem ID"],
                                "response": f"The answer is \\boxed{{{row['Short Answer'].strip('$')}}}."}) + "\n")
    r = CliRunner().invoke(app, ["eval", "score", "--suite", "imo-answer", "--responses", str(resp), "--out",
                                 str(tmp_path / "o"), "--data", str(imo), "--judge-prompt",
                                 str(imo / "prompts/nvidia_gym/answerbench_autograder_judge.yaml"), "--profile", "tiny",
                                 *flag])
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["grading"][how] == 1 and s["judge_calls"] == 0


@pytest.mark.parametrize("flag,expect", [(None, True), (True, True), (False, False)])
def test_instruction_following_modes(flag, expect):
    """IFEval under the three modes: a closed think block holding capitals is removed in auto and on, and stays part
    of the checked text in off (generated without thinking: the whole text is the answer, as the official driver
    checks it)."""
    from recipe.eval.benchmarks.ifeval import score_instructions
    row = {"key": 1, "prompt": "answer in lowercase", "instruction_id_list": ["change_case:english_lowercase"],
           "kwargs": [{}]}
    v = score_instructions(row, "<think>PLAN IN CAPITALS</think>all lowercase here.", flag)
    assert (v["score"] == 1.0) is expect
    assert score_instructions(row, "<think>still thinking, all lowercase", flag)["no_answer"] is (flag is True or flag is None)
