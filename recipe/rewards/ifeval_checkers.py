"""IFEval instruction checkers (google-research ``instruction_following_eval``, strict mode).

All 25 IFEval instruction ids, re-implemented from the published rules with their kwargs. Each checker
is ``fn(text, kw, prompt) -> bool``; ``kw`` holds the row's non-null kwargs. Departures: NLTK tokenisers
are replaced by the regex helpers of ``if_text`` (sentences counted punkt-like: line breaks and list numbers are not
sentence ends);
``language:response_language`` and the ``change_case`` English check use ``langdetect`` as IFEval does.
"""
from __future__ import annotations

import json
import re
from typing import Callable

from recipe.rewards.if_text import compare, count_words, punkt_sentences, word_tokenize

Checker = Callable[[str, dict, str], bool]
CHECKERS: dict[str, Checker] = {}


def checker(name: str):
    def deco(fn: Checker) -> Checker:
        CHECKERS[name] = fn
        return fn

    return deco


def _lang(text: str) -> str | None:
    try:
        import langdetect
        from langdetect import DetectorFactory

        DetectorFactory.seed = 0
        return langdetect.detect(text)
    except Exception:  # langdetect raises LangDetectException on text without features
        return None


# --- keywords -------------------------------------------------------------------------------
@checker("keywords:existence")
def _existence(t, kw, p):
    return all(re.search(re.escape(k), t, re.IGNORECASE) for k in kw["keywords"])


@checker("keywords:frequency")
def _frequency(t, kw, p):
    n = len(re.findall(re.escape(kw["keyword"]), t, re.IGNORECASE))
    return compare(n, kw.get("relation"), int(kw["frequency"]))


@checker("keywords:forbidden_words")
def _forbidden(t, kw, p):
    return not any(re.search(r"\b" + re.escape(w) + r"\b", t, re.IGNORECASE) for w in kw["forbidden_words"])


@checker("keywords:letter_frequency")
def _letter_freq(t, kw, p):
    n = t.lower().count(str(kw["letter"]).lower())
    return compare(n, kw.get("let_relation"), int(kw["let_frequency"]))


# --- language / length ----------------------------------------------------------------------
@checker("language:response_language")
def _language(t, kw, p):
    got = _lang(t)
    return True if got is None else got == kw["language"]


@checker("length_constraints:number_sentences")
def _n_sentences(t, kw, p):
    return compare(len(punkt_sentences(t)), kw.get("relation"), int(kw["num_sentences"]))


@checker("length_constraints:number_paragraphs")
def _n_paragraphs(t, kw, p):
    paras = re.split(r"\s?\*\*\*\s?", t)
    n = len(paras)
    for i, para in enumerate(paras):
        if not para.strip():
            if i in (0, len(paras) - 1):
                n -= 1
            else:
                return False
    return n == int(kw["num_paragraphs"])


@checker("length_constraints:number_words")
def _n_words(t, kw, p):
    return compare(count_words(t), kw.get("relation"), int(kw["num_words"]))


@checker("length_constraints:nth_paragraph_first_word")
def _nth_para(t, kw, p):
    paras = [x for x in re.split(r"\n\n", t) if x.strip()]
    nth = int(kw["nth_paragraph"])
    if len(paras) != int(kw["num_paragraphs"]) or nth > len(paras) or nth < 1:
        return False
    words = paras[nth - 1].strip().split()
    if not words:
        return False
    word = words[0].lstrip("'\"")
    first = ""
    for ch in word:
        if ch in ".,?!'\"":
            break
        first += ch.lower()
    return first == str(kw["first_word"]).lower()


# --- detectable content / format ------------------------------------------------------------
@checker("detectable_content:number_placeholders")
def _placeholders(t, kw, p):
    return len(re.findall(r"\[.*?\]", t)) >= int(kw["num_placeholders"])


@checker("detectable_content:postscript")
def _postscript(t, kw, p):
    marker = str(kw.get("postscript_marker") or "P.S.")
    if marker == "P.P.S":
        pat = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pat = r"\s*p\.\s?s\..*$"
    else:
        pat = r"\s*" + re.escape(marker.lower()) + r".*$"
    return bool(re.findall(pat, t.lower(), flags=re.MULTILINE))


@checker("detectable_format:number_bullet_lists")
def _bullets(t, kw, p):
    stars = re.findall(r"^\s*\*[^\*].*$", t, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", t, flags=re.MULTILINE)
    return len(stars) + len(dashes) == int(kw["num_bullets"])


@checker("detectable_format:constrained_response")
def _constrained(t, kw, p):
    return any(o in t.strip() for o in ("My answer is yes.", "My answer is no.", "My answer is maybe."))


@checker("detectable_format:number_highlighted_sections")
def _highlights(t, kw, p):
    n = sum(1 for h in re.findall(r"\*[^\n\*]*\*", t) if h.strip("*").strip())
    n += sum(1 for h in re.findall(r"\*\*[^\n\*]*\*\*", t) if h.removeprefix("**").removesuffix("**").strip())
    return n >= int(kw["num_highlights"])


@checker("detectable_format:multiple_sections")
def _sections(t, kw, p):
    splitter = str(kw.get("section_spliter") or "Section").strip()
    sections = re.split(r"\s?" + re.escape(splitter) + r"\s?\d+\s?", t)
    return len(sections) - 1 >= int(kw["num_sections"])


@checker("detectable_format:json_format")
def _json(t, kw, p):
    v = t.strip()
    for pre in ("```json", "```Json", "```JSON", "```"):
        v = v.removeprefix(pre)
    v = v.removesuffix("```").strip()
    try:
        json.loads(v)
    except ValueError:
        return False
    return True


@checker("detectable_format:title")
def _title(t, kw, p):
    return any(x.lstrip("<").rstrip(">").strip() for x in re.findall(r"<<[^\n]+>>", t))


# --- combination / start-end / case / punctuation -------------------------------------------
@checker("combination:two_responses")
def _two(t, kw, p):
    parts = t.split("******")
    valid = []
    for i, r in enumerate(parts):
        if not r.strip():
            if i not in (0, len(parts) - 1):
                return False
        else:
            valid.append(r)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


@checker("combination:repeat_prompt")
def _repeat_prompt(t, kw, p):
    target = kw.get("prompt_to_repeat") or p
    return bool(target) and t.strip().lower().startswith(target.strip().lower())


@checker("startend:end_checker")
def _end(t, kw, p):
    return t.strip().strip('"').lower().endswith(str(kw["end_phrase"]).strip().lower())


@checker("startend:quotation")
def _quotation(t, kw, p):
    v = t.strip()
    return len(v) > 1 and v[0] == '"' and v[-1] == '"'


@checker("change_case:capital_word_frequency")
def _capital_freq(t, kw, p):
    n = sum(1 for w in word_tokenize(t) if w.isupper())
    return compare(n, kw.get("capital_relation"), int(kw["capital_frequency"]))


@checker("change_case:english_capital")
def _capital(t, kw, p):
    return t.isupper() and _lang(t) in ("en", None)


@checker("change_case:english_lowercase")
def _lower(t, kw, p):
    return t.islower() and _lang(t) in ("en", None)


@checker("punctuation:no_comma")
def _no_comma(t, kw, p):
    return "," not in t
