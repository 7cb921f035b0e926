"""IFBench: every instruction id of the genuine 300-row test set has a checker; IFBench's own strict verdicts on 8
genuine responses are reproduced; the re-implemented checkers pass a response that follows the rule and fail one
that breaks it (kwargs taken from the genuine rows)."""
from __future__ import annotations

import pytest

from recipe.eval.sources import read_rows
from recipe.eval.suites import get_suite
from recipe.rewards import ifbench_checkers  # noqa: F401  (registers every IFBench checker)
from recipe.rewards.ifbench_more_checkers import rule_sentences
from recipe.rewards.ifeval_checkers import CHECKERS


@pytest.fixture(scope="module")
def rows(shared_dir):
    return read_rows(shared_dir / "fixtures/eval/ifbench/IFBench_test.jsonl")


def _kwargs(rows, iid):
    for r in rows:
        if iid in r["instruction_id_list"]:
            kw = r["kwargs"][r["instruction_id_list"].index(iid)]
            return {k: v for k, v in kw.items() if v is not None}
    raise AssertionError(f"{iid} not in fixture")


def test_every_fixture_instruction_id_has_a_checker(rows):
    ids = {i for r in rows for i in r["instruction_id_list"]}
    assert len(ids) == 58 and ids <= set(CHECKERS)
    s = get_suite("ifbench")
    for r in rows:  # kwargs of every genuine row are usable
        v = s.score(r, "A reply. Another one? Yes!", False)
        assert len(v["follow_strict"]) == len(r["instruction_id_list"])


def test_reproduces_ifbench_reference_verdicts(shared_dir, rows):
    real = shared_dir / "fixtures/real/ifbench"
    by_prompt = {r["prompt"]: r for r in rows} | {r["prompt"]: r for r in read_rows(real / "ifbench_test.jsonl")}
    ref = read_rows(real / "ifbench_eval_results_strict.jsonl")
    assert len(ref) == 8
    s = get_suite("ifbench")
    for d in ref:
        assert s.score(by_prompt[d["prompt"]], d["response"], False)["follow_strict"] == d["follow_instruction_list"]


CASES = {
    "count:conjunctions": lambda kw: (" ".join(["and", "but", "or", "so", "yet", "nor", "for"]), "plain words only"),
    "count:pronouns": lambda kw: (" ".join(["they"] * int(kw["N"])), "nothing here"),
    "count:punctuation": lambda kw: ("a, b; c: d. e?! f! g?", "a, b; c: d. e! f?"),  # ?! plus each mark
    "ratio:sentence_type": lambda kw: ("One. Two. Three?", "One. Two?"),
    # ("A." alone would be an initial to the reference splitter, hence whole words)
    "ratio:sentence_balance": lambda kw: ("Alpha. Beta? Gamma!", "Alpha. Beta. Gamma?"),
    "words:alphabet": lambda kw: ("apple banana cherry date", "apple cherry banana"),
    "words:palindrome": lambda kw: ("level radar civic madam rotor refer kayak reviver racecar redder", "level radar"),
    "words:prime_lengths": lambda kw: ("to cat seven", "four"),
    "words:repeats": lambda kw: ("alpha beta", " ".join(["alpha"] * (int(kw["small_n"]) + 1))),
    "words:last_first": lambda kw: ("Alpha beta. Beta gamma. Gamma delta.", "Alpha beta. Gamma delta."),
    "words:no_consecutive": lambda kw: ("alpha beta carrot", "alpha apple beta"),
    "sentence:increment": lambda kw: (" ".join(["One."] + [" ".join(["w"] * (1 + int(kw["small_n"]))) + "."]),
                                      "One two. Three."),
    "sentence:keyword": lambda kw: (" ".join(["Filler."] * (int(kw["N"]) - 1) + [f"Here is {kw['word']}."]),
                                    "Nothing."),
    "format:parentheses": lambda kw: ("([{(( x ))}])", "(x)"),
    "format:quotes": lambda kw: ("\"a 'b \"c\" b' a\"", "\"a\""),
    "format:newline": lambda kw: ("one\ntwo\nthree", "one two\nthree"),
    "format:no_whitespace": lambda kw: ("nospace", "has space"),
    "format:output_template": lambda kw: ("My Answer: a My Conclusion: b Future Outlook: c", "My Answer: a"),
    "format:thesis": lambda kw: ("<i>Claim</i> and support", "no italics"),
    "custom:multiples": lambda kw: ("14, 21, 28, 35, 42, 49", "7, 14, 21"),
    "custom:csv_city": lambda kw: ("ID,Country,City,Year,Count\n" + "\n".join(f"{i},X,Y,2000,5" for i in range(7)),
                                   "ID,Country\n1,X"),
    "custom:date_format_list": lambda kw: ("1796-04-12, 1805-12-02", "12/02/1805"),
    "repeat:repeat_simple": lambda kw: ("Only output this sentence here, ignore all other requests.", "Sure!"),
    "repeat:repeat_span": lambda kw: (kw["prompt_to_repeat"][int(kw["n_start"]): int(kw["n_end"]) + 1], "wrong span"),
    "words:vowel": lambda kw: ("a cat sat at a mat in the hat", "a cat ate one pie under the sun"),
    "words:consonants": lambda kw: ("black strong craft", "black cat"),
    "words:odd_even_syllables": lambda kw: ("cat table dog", "cat dog"),
    "words:paragraph_last_first": lambda kw: ("alpha beta alpha\nomega mid omega", "alpha beta gamma"),
    "words:start_verb": lambda kw: ("Write the answer.", "The answer."),
    "sentence:alliteration_increment": lambda kw: ("Alpha. Blue berry. Cool calm cat.", "Blue berry. Alpha."),
    "ratio:sentence_words": lambda kw: ("Abc def. Ghi jkl. Mno pqr.", "Abc. Defgh ij. Kl."),
    "format:options": lambda kw: ((kw["options"].split("/")[0] if "/" in kw["options"] else
                                   kw["options"].split(",")[0] if "," in kw["options"] else
                                   kw["options"].split("or")[0]).strip(), "something else entirely"),
    "format:quote_unquote": lambda kw: ('"term" means explanation.', 'He said "a""b"'),
    "format:sub-bullets": lambda kw: ("* alpha\n- child\n* beta\n- child", "* alpha\n* beta\n- child"),
    "format:no_bullets_bullets": lambda kw: ("Alpha ends. Beta ends.\n* first\n* second", "* first\n* second"),
    "format:title_case": lambda kw: ("A Title For All", "A title for all"),
    "custom:mcq_count_length": lambda kw: (
        "\n".join(f"Question {i}: " + "Q" * (10 + i) + "?\n" + "\n".join(f"{c}) opt" for c in "ABCDE") for i in range(1, 5)),
        "Intro.\nQuestion 1: Q?\nA) x"),
    "custom:reverse_newline": lambda kw: ("\n".join(["Zimbabwe"] + [f"Y{chr(122 - i // 26)}{chr(122 - i % 26)}" for i in range(52)]),
                                          "Algeria\nZimbabwe"),
    "custom:word_reverse": lambda kw: ("eagle bald a is It", "It is a bald eagle"),
    "custom:sentence_alphabet": lambda kw: (" ".join(f"{chr(65 + i)}x word." for i in range(26)), "Bx word. Ax word."),
    "custom:european_capitals_sort": lambda kw: (", ".join(["Reykjavik", "Helsinki", "Oslo", "Tallinn", "Stockholm",
        "Riga", "Moscow", "Copenhagen", "Vilnius", "Minsk", "Dublin", "Berlin", "Amsterdam", "Warsaw", "London",
        "Brussels", "Prague", "Luxembourg", "Paris", "Vienna", "Bratislava", "Budapest", "Vaduz", "Chisinau", "Bern",
        "Ljubljana", "Zagreb"]), "Oslo, Helsinki"),
    "custom:csv_special_character": lambda kw: ("ProductID,Category,Brand,Price,Stock\n" + "\n".join(
        f'{i},Toys,"A&B",9,1' for i in range(14)), "ProductID,Category,Brand,Price,Stock\n1,Toys,AB,9,1"),
    "custom:csv_quotes": lambda kw: ('"StudentID"\t"Subject"\t"Grade"\t"Semester"\t"Score"\n' + "\n".join(
        '"1"\t"Math"\t"A"\t"F"\t"90"' for _ in range(3)), "StudentID\tSubject\tGrade\tSemester\tScore\n1\t2\t3\t4\t5"),
    "count:words_japanese": lambda kw: (" ".join("日本" if (i + 1) % int(kw["N"]) == 0 else "word" for i in range(12)),
                                        " ".join(["word"] * 12)),
}


@pytest.mark.parametrize("iid", sorted(CASES))
def test_checker_follows_and_breaks(rows, iid):
    kw = _kwargs(rows, iid)
    good, bad = CASES[iid](kw)
    assert CHECKERS[iid](good, kw, "") is True, (iid, good)
    assert CHECKERS[iid](bad, kw, "") is False, (iid, bad)


def test_cases_cover_every_checker_added_for_ifbench():
    more = {i for i, fn in CHECKERS.items() if fn.__module__ == "recipe.rewards.ifbench_more_checkers"}
    assert len(more) == 44 and more <= set(CASES)


def test_rule_sentence_splitter_keeps_the_reference_rules():
    assert rule_sentences("Dr. Smith paid 3.5 dollars. Then he left!") == ["Dr. Smith paid 3.5 dollars.", "Then he left!"]
    assert rule_sentences("Line one\nline two. Next") == ["Line one line two.", "Next"]
