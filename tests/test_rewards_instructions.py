"""Every instruction checker: one response that follows it and one that does not, with its kwargs honoured."""
from __future__ import annotations

import pytest

from recipe.rewards import verify
from recipe.rewards.instruction_following import supported_instructions

NAMES = "Emma met Liam and Sophia."
CASES = [
    # IFEval
    ("keywords:existence", {"keywords": ["moon"]}, "The moon rose.", "The sun rose."),
    ("keywords:frequency", {"keyword": "tea", "frequency": 3, "relation": "at least"}, "tea tea tea", "tea tea"),
    ("keywords:forbidden_words", {"forbidden_words": ["bad"]}, "all good", "a bad day"),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 2, "let_relation": "less than"}, "zoo", "zzz"),
    ("language:response_language", {"language": "de"}, "Das ist ein ganz normaler deutscher Satz über das Wetter heute.", "This is a perfectly normal English sentence about the weather today."),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"}, "One sentence.", "One. Two. Three."),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "First part.\n***\nSecond part.", "Only one part."),
    ("length_constraints:number_words", {"num_words": 4, "relation": "at least"}, "one two three four", "one two"),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
     "Intro here.\n\nThen the end.", "Intro here.\n\nAfter that the end."),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], at [address].", "Dear [name]."),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\nP.S. see you", "Body only."),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n* two", "* one\n* two\n* three"),
    ("detectable_format:constrained_response", {}, "My answer is yes.", "Yes."),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and *two*", "*one* only"),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2}, "Section 1\na\nSection 2\nb", "Section 1\na"),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', "{a: 1}"),
    ("detectable_format:title", {}, "<<Title>>\ntext", "Title\ntext"),
    ("combination:two_responses", {}, "First answer.\n******\nSecond answer.", "Only one answer."),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "Say hi. Hi!", "Hi!"),
    ("startend:end_checker", {"end_phrase": "Is there anything else?"}, "Done. Is there anything else?", "Is there anything else? Done."),
    ("startend:quotation", {}, '"Quoted."', "Not quoted."),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}, "USA and NASA", "Usa and Nasa"),
    ("change_case:english_capital", {}, "ALL CAPS ENGLISH TEXT RIGHT HERE.", "Not all caps."),
    ("change_case:english_lowercase", {}, "all lowercase english text right here.", "Not lowercase."),
    ("punctuation:no_comma", {}, "No commas.", "Yes, commas."),
    # IFBench / NeMo-Gym IF-RL
    ("count:word_count_range", {"min_words": 2, "max_words": 4}, "three words here", "one"),
    ("count:unique_word_count", {"N": 3}, "a b c", "a a a"),
    ("count:numbers", {"N": 2}, "1 and 22", "1 and 22 and 333"),
    ("count:person_names", {"N": 3}, NAMES, "Emma met nobody."),
    ("count:lowercase_counting", {"N": 2}, "ALL CAPS but two", "many lowercase words here"),
    ("count:keywords_multiple", {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
     "a1 b2 b2 c3 c3 c3 d4 d4 d4 d4 d4 e5 e5 e5 e5 e5 e5 e5", "a1 b2 c3 d4 e5"),
    ("ratio:stop_words", {"percentage": 20}, "Cats chase mice daily.", "The cat is on the mat and it is there."),
    ("ratio:overlap", {"reference_text": "the quick brown fox jumps", "percentage": 100}, "the quick brown fox jumps", "a slow red dog sits"),
    ("custom:character_reverse", {}, "elgae dlab", "bald eagle"),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR a\nSEPARATOR b", "- a\n- b"),
    ("format:line_indent", {}, "a\n b\n  c", "a\nb\nc"),
    ("format:emoji", {}, "Hello there 😀. Good bye 🎉.", "Hello there. Good bye."),
    ("first_word:first_word_sent", {"first_word": "so"}, "So it begins. So it ends.", "So it begins. It ends."),
    ("last_word:last_word_answer", {"last_word": "done"}, "We are done.", "Done we are."),
    ("repeat:repeat_change", {"prompt_to_repeat": "Write a poem about cats."}, "Compose a poem about cats.", "Write a poem about cats."),
    ("words:keywords_specific_position", {"keyword": "blue", "n": 2, "m": 3}, "First one. It is blue sky.", "First one. Blue it is."),
    ("words:words_position", {"keyword": "very"}, "A very good and very fine", "A good and fine day"),
]


def test_cases_cover_every_id_of_ifeval_and_ours():
    from recipe.rewards.reference_if import registry
    # the IFBench ids have their cases in tests/test_eval_ifbench.py (which checks it covers them all); every id,
    # IFBench's included, also has a generated case with the reference's verdict (tests/test_if_reference_verdicts.py)
    assert {c[0] for c in CASES} >= {i for i, s in registry().items() if s.origin in ("ifeval", "ours")}


@pytest.mark.parametrize("iid,kw,good,bad", CASES, ids=[c[0] for c in CASES])
def test_checker(iid, kw, good, bad, nltk_ready):
    rec = lambda: {"verifier": {"name": "instruction_following", "instruction_id_list": [iid], "kwargs": [kw]}}  # noqa: E731
    assert verify(rec(), good).details["follow_instruction_list"] == [True], good
    assert verify(rec(), bad).details["follow_instruction_list"] == [False], bad


def test_dense_ifbench_kwargs_with_nulls_are_honoured():
    kw = {"N": 2, "keyword": None, "percentage": None, "prompt_to_repeat": None}
    rec = {"verifier": {"name": "instruction_following", "instruction_id_list": ["count:numbers"], "kwargs": [kw]}}
    assert verify(rec, "1 and 2").score == 1.0
