"""Priority-1 verifiers: math, mcqa, instruction_following, structured_output, tool_call, and the API."""
from __future__ import annotations

import re
import threading

import pytest

from recipe.rewards import UnknownVerifierError, VerifierResult, verifier_names, verify, verify_batch


def rec(name, mode=None, **fields):
    return {"id": "t", "domain": "test", "mode": mode, "verifier": {"name": name, **fields}}


# --- result / registry ---------------------------------------------------------------------
def test_result_score_must_be_in_unit_interval():
    with pytest.raises(ValueError):
        VerifierResult(1.5, "correct")


def test_registry_names_and_unknown_name_is_a_config_error():
    assert {"math", "mcqa", "instruction_following", "structured_output", "tool_call"} <= set(verifier_names())
    with pytest.raises(UnknownVerifierError, match="unknown verifier 'mathh'"):
        verify(rec("mathh"), "x")
    with pytest.raises(UnknownVerifierError):
        verify_batch([rec("math", expected_answer="1"), rec("nope")], ["a", "b"])


# --- math ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gold,response,mode,reason",
    [
        ("\\frac{1}{2}", "<think>try \\boxed{3}</think>So \\boxed{0.5}", "thinking", "correct"),
        ("1/2", "<think>so \\boxed{1/2}", "thinking", "unterminated_think"),
        ("32", "The answer is \\boxed{32}.", None, "correct"),
        ("x^2+1", "\\boxed{1+x^{2}}", None, "correct"),
        ("(1,2)", "\\boxed{(2,1)}", None, "wrong_answer"),
        ("5", "The answer is 5", None, "no_answer"),
        ("\\(\\frac{333}{1997}\\)", "\\boxed{\\dfrac{333}{1997}}", None, "correct"),
        ("3", "first \\boxed{3} then \\boxed{4}", None, "wrong_answer"),
        ("\\sqrt{2}", "</think>\\boxed{\\frac{\\sqrt{8}}{2}}", "thinking", "correct"),
    ],
)
def test_math(gold, response, mode, reason):
    r = verify(rec("math", mode, expected_answer=gold), response)
    assert r.reason == reason, r
    assert r.score == (1.0 if reason == "correct" else 0.0)


@pytest.mark.parametrize("gold,pred", [("7", "8"), ("7", "007"), ("-0", "0"), ("+12", "12"), ("12", "-12"),
                                       ("48", "48."), ("123456789", "123456788"), ("1000", "1,000"), ("3", "3.0"),
                                       ("10", " 1 0 "), ("5", "05.")])
def test_math_integer_shortcut_agrees_with_math_verify(gold, pred, monkeypatch):
    """Two plain integers are compared by value without Math-Verify's parser, with Math-Verify's verdict."""
    from recipe.rewards import math_verifier as mv

    fast = mv.check_math(gold, pred)
    monkeypatch.setattr(mv, "_INT", re.compile(r"(?!)"))  # never matches: the full Math-Verify path
    slow = mv.check_math(gold, pred)
    assert fast[0] == slow[0], (gold, pred, fast, slow)
    g, p = mv._norm_literal(gold), mv._norm_literal(pred)
    ints = all(re.fullmatch(r"[+-]?\d{1,9}", x) for x in (g, p))
    assert fast[1] == ("literal" if g == p else "integer" if ints else slow[1])


def test_math_works_in_a_thread():
    out = {}

    def run():
        out["r"] = verify(rec("math", expected_answer="\\frac{2}{4}"), "\\boxed{0.5}")

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert out["r"].reason == "correct"


def test_math_own_timeout_fires():
    from recipe.rewards.timeouts import CheckTimeout, run_with_timeout

    def spin():
        while True:
            pass

    with pytest.raises(CheckTimeout):
        run_with_timeout(spin, 0.2)


def test_math_missing_field_scores_zero():
    assert verify(rec("math"), "\\boxed{1}").reason == "missing_field:expected_answer"


# --- mcqa ----------------------------------------------------------------------------------
OPTS = [{"A": "Karyotyping"}, {"B": "PCR"}, {"C": "Sequencing"}, {"D": "Painting"}]


@pytest.mark.parametrize(
    "response,extracted",
    [
        ("\\boxed{B}", "B"),
        ("Reasoning... Answer: B", "B"),
        ("The correct answer is (B).", "B"),
        ("**Answer:** (B) PCR", "B"),
        ("(B)", "B"),
        ("B", "B"),
        ("B. PCR", "B"),
        ("\\boxed{\\text{B}}", "B"),
        ("\\boxed{PCR}", "B"),
        ("I first thought (A) but then (C) fits. Answer: C", "C"),
        ("no letter here", None),
    ],
)
def test_mcqa_extraction(response, extracted):
    r = verify(rec("mcqa", expected_answer="B", options=OPTS), response)
    assert r.details.get("extracted") == extracted, r
    assert r.score == (1.0 if extracted == "B" else 0.0)


def test_mcqa_strict_boxed_mode_and_thinking():
    r = verify(rec("mcqa", expected_answer="B", options=OPTS, grading_mode="strict_single_letter_boxed"), "Answer: B")
    assert r.reason == "no_answer"
    r = verify(rec("mcqa", "thinking", expected_answer="B", options=OPTS), "<think>\\boxed{B}")
    assert r.reason == "unterminated_think"
    assert verify(rec("mcqa", expected_answer="Z", options=OPTS), "Z").reason == "invalid_field:expected_answer"


# --- instruction following ------------------------------------------------------------------
def IF(ids, kwargs, **kw):
    return rec("instruction_following", instruction_id_list=ids, kwargs=kwargs, **kw)


@pytest.mark.parametrize(
    "iid,kw,good,bad",
    [
        ("change_case:english_capital", {}, "THIS IS ALL IN CAPITAL LETTERS AND ENGLISH.", "This is not."),
        ("change_case:english_lowercase", {}, "this is all lowercase english text.", "This Is Not."),
        ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "at least"}, "cat and Cat", "one cat"),
        ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "less than"}, "one cat", "cat cat"),
        ("keywords:existence", {"keywords": ["alpha", "beta"]}, "Alpha then beta", "alpha only"),
        ("length_constraints:number_words", {"num_words": 3, "relation": "less than"}, "two words", "three whole words"),
        ("length_constraints:number_words", {"num_words": 3, "relation": "at least"}, "three whole words", "two words"),
        ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Done. Any other questions?", "Any other questions? Done."),
        ("punctuation:no_comma", {}, "no commas here", "a, b"),
        ("detectable_format:title", {}, "<<My Title>>\nbody", "My Title\nbody"),
    ],
)
def test_if_checkers_honour_kwargs(iid, kw, good, bad):
    assert verify(IF([iid], [kw]), good).score == 1.0
    r = verify(IF([iid], [kw]), bad)
    assert r.score == 0.0 and r.details["follow_instruction_list"] == [False]


def test_if_grading_modes_and_details():
    ids = ["punctuation:no_comma", "keywords:existence"]
    kws = [{}, {"keywords": ["zebra"]}]
    r = verify(IF(ids, kws), "a, zebra")
    assert r.score == 0.0 and r.details["follow_instruction_list"] == [False, True]
    r = verify(IF(ids, kws, grading_mode="fraction"), "a, zebra")
    assert r.score == 0.5 and r.reason == "partially_followed"


def test_if_unknown_instruction_and_bad_kwargs_do_not_raise():
    r = verify(IF(["made:up", "punctuation:no_comma"], [{}, {}], grading_mode="fraction"), "ok")
    assert r.score == 0.5 and "unknown_instruction:made:up" in r.details["errors"]
    r = verify(IF(["keywords:frequency"], [{}]), "cat")
    assert r.score == 0.0 and r.details["errors"][0].startswith("bad_kwargs")
    assert verify(IF(["punctuation:no_comma"], [{}, {}]), "x").reason == "invalid_field:kwargs"


# --- structured output ----------------------------------------------------------------------
SCHEMA = '{"type": "object", "required": ["name", "age"], "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "additionalProperties": false}'


@pytest.mark.parametrize(
    "response,reason",
    [
        ('{"name": "Ada", "age": 36}', "correct"),
        ('```json\n{"name": "Ada", "age": 36}\n```', "correct"),
        ('{"name": "Ada", "age": "36"}', "schema_violation"),
        ('{"name": "Ada"}', "schema_violation"),
        ('{"name": "Ada", "age": 36, "x": 1}', "schema_violation"),
        ("not json", "parse_error"),
        ("", "no_answer"),
    ],
)
def test_structured_output(response, reason):
    assert verify(rec("structured_output", schema_str=SCHEMA), response).reason == reason


def test_structured_output_yaml_toml_and_invalid_schema():
    assert verify(rec("structured_output", schema_str=SCHEMA, schema_type="yaml"), "name: Ada\nage: 36").score == 1.0
    assert verify(rec("structured_output", schema_str=SCHEMA, schema_type="toml"), 'name = "Ada"\nage = 36').score == 1.0
    assert verify(rec("structured_output", schema_str='{"type": 5}'), "{}").reason == "invalid_field:schema_str"
    assert verify(rec("structured_output", schema_str="{not json"), "{}").reason == "invalid_field:schema_str"


# --- tool calls -----------------------------------------------------------------------------
XML = """<tool_call>
<function=get_weather>
<parameter=city>
Paris
</parameter>
<parameter=days>
3
</parameter>
<parameter=units>
["C", "F"]
</parameter>
</function>
</tool_call>"""


def test_tool_call_xml_matches_with_json_values():
    want = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "units": ["C", "F"]}}]
    r = verify(rec("tool_call", expected_calls=want), XML)
    assert r.score == 1.0 and r.details["num_correct"] == 1
    want_str = [{"name": "get_weather", "arguments": '{"city": "Paris", "days": "3", "units": ["C", "F"]}'}]
    assert verify(rec("tool_call", expected_calls=want_str), XML).score == 1.0


def test_tool_call_mismatches():
    want = [{"name": "get_weather", "arguments": {"city": "Rome", "days": 3, "units": ["C", "F"]}}]
    assert verify(rec("tool_call", expected_calls=want), XML).reason == "wrong_arguments"
    want = [{"name": "get_time", "arguments": {}}]
    assert verify(rec("tool_call", expected_calls=want), XML).reason == "wrong_calls"
    assert verify(rec("tool_call", expected_calls=want), "I will not call tools").reason == "no_tool_call"
    two = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "units": ["C", "F"]}}] * 2
    assert verify(rec("tool_call", expected_calls=two), XML).score == 0.0


def test_tool_call_openai_style_message():
    msg = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]}
    assert verify(rec("tool_call", expected_calls=[{"name": "f", "arguments": {"x": 1}}]), msg).score == 1.0


def test_tool_call_thinking_mode_ignores_calls_inside_unfinished_thinking():
    r = verify(rec("tool_call", "thinking", expected_calls=[{"name": "get_weather", "arguments": {}}]), "<think>" + XML)
    assert r.reason == "unterminated_think"
