"""The remaining IFBench (allenai/IFBench) instruction checkers: every id of ``IFBench_test.jsonl`` has a checker
(``recipe.rewards.ifbench_checkers`` holds the first 17). Rules re-implemented from the reference ``check_following``
methods, with their quirks kept (e.g. ``count:keywords_multiple`` there counts substrings; here, as before, whole
words -- see ``ifbench_checkers``). Sentences are split by ``rule_sentences``, the rule-based splitter IFEval's and
IFBench's ``instructions_util.split_into_sentences`` use (line breaks are spaces; abbreviations, initials, decimals,
acronyms and websites protected). Departures: NLTK ``word_tokenize`` -> ``if_text.word_tokenize`` (regex);
``words:start_verb`` uses NLTK's POS tagger upstream, here a first-word test against base-form verbs (a list, plus
the ``-ize/-ify/-ate`` endings) since no tagger data can be downloaded.
"""
from __future__ import annotations

import csv
import io
import re
import string
import unicodedata
from collections import Counter

from recipe.rewards.if_text import count_words, word_tokenize
from recipe.rewards.ifeval_checkers import checker

P = string.punctuation
_NOPUNCT = str.maketrans("", "", P)

_ALPHA = "([A-Za-z])"
_PREFIXES = "(Mr|St|Mrs|Ms|Dr)[.]"
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
_STARTERS = r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|That\s|This\s|Wherever)"
_ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_WEBSITES = "[.](com|net|org|io|gov|edu|me)"
_DIGITS = "([0-9])"


def rule_sentences(text: str) -> list[str]:
    """IFEval/IFBench's regex sentence splitter (same rules, same order)."""
    t = " " + text + "  "
    t = t.replace("\n", " ")
    t = re.sub(_PREFIXES, "\\1<prd>", t)
    t = re.sub(_WEBSITES, "<prd>\\1", t)
    t = re.sub(_DIGITS + "[.]" + _DIGITS, "\\1<prd>\\2", t)
    t = re.sub(r"\.{2,}", lambda m: "<prd>" * len(m.group(0)) + "<stop>", t)
    t = t.replace("Ph.D.", "Ph<prd>D<prd>")
    t = re.sub(r"\s" + _ALPHA + "[.] ", " \\1<prd> ", t)
    t = re.sub(_ACRONYMS + " " + _STARTERS, "\\1<stop> \\2", t)
    t = re.sub(_ALPHA + "[.]" + _ALPHA + "[.]" + _ALPHA + "[.]", "\\1<prd>\\2<prd>\\3<prd>", t)
    t = re.sub(_ALPHA + "[.]" + _ALPHA + "[.]", "\\1<prd>\\2<prd>", t)
    t = re.sub(" " + _SUFFIXES + "[.] " + _STARTERS, " \\1<stop> \\2", t)
    t = re.sub(" " + _SUFFIXES + "[.]", " \\1<prd>", t)
    t = re.sub(" " + _ALPHA + "[.]", " \\1<prd>", t)
    t = t.replace(".\u201d", "\u201d.").replace('."', '".').replace('!"', '"!').replace('?"', '"?')
    t = t.replace(".", ".<stop>").replace("?", "?<stop>").replace("!", "!<stop>").replace("<prd>", ".")
    out = [s.strip() for s in t.split("<stop>")]
    if out and not out[-1]:
        out = out[:-1]
    return out


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ASCII", "ignore").decode("ASCII")


# --- count / ratio -----------------------------------------------------------------------------------------
@checker("count:conjunctions")
def _conjunctions(t, kw, p):
    found = {w.strip(P + " ").lower() for w in t.split()} & {"and", "but", "for", "nor", "or", "so", "yet"}
    return len(found) >= int(kw["small_n"])


_PRONOUNS = set("""i me we us you he him she her it they them my mine our ours your yours his hers its their theirs
myself ourselves yourself yourselves himself herself itself themselves this that these those who whom whose which what
whoever whomever whatever whichever anybody anyone anything everybody everyone everything nobody nothing somebody
someone something each either neither both all some any none""".split())


@checker("count:pronouns")
def _pronouns(t, kw, p):
    return sum(1 for w in word_tokenize(t.replace("/", " ").lower()) if w in _PRONOUNS) >= int(kw["N"])


@checker("count:punctuation")
def _punct_cover(t, kw, p):
    if not ("!?" in t or "?!" in t or "\u203d" in t):
        return False
    rest = t.replace("?!", "", 1)
    if len(rest) == len(t):
        rest = t.replace("!?", "", 1)
    return {".", ",", "!", "?", ";", ":"} <= set(rest)


@checker("count:words_japanese")
def _japanese(t, kw, p):
    n = int(kw["N"])
    for i, w in enumerate(t.split()):
        w = w.strip(P + " ")
        if (i + 1) % n == 0 and w and not w.isdigit() and not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", w):
            return False
    return True


@checker("ratio:sentence_type")
def _sent_type(t, kw, p):
    s = rule_sentences(t)
    return sum(x.endswith(".") for x in s) == 2 * sum(x.endswith("?") for x in s)


@checker("ratio:sentence_balance")
def _sent_balance(t, kw, p):
    s = rule_sentences(t)
    return sum(x.endswith(".") for x in s) == sum(x.endswith("?") for x in s) == sum(x.endswith("!") for x in s)


@checker("ratio:sentence_words")
def _sent_words(t, kw, p):
    s = rule_sentences(t)
    return len(s) == 3 and len({len(x.strip()) for x in s}) == 1


# --- words ---------------------------------------------------------------------------------------------------
@checker("words:alphabet")
def _alphabet(t, kw, p):
    words = t.translate(_NOPUNCT).strip(P + " ").split()
    if not words or words[0][0].lower() not in string.ascii_lowercase:
        return False
    letter = words[0][0].lower()
    for w in words[1:]:
        w = w.strip(P + " ").lower()
        if not w:
            continue
        letter = string.ascii_lowercase[(string.ascii_lowercase.index(letter) + 1) % 26]
        if w[0] != letter:
            return False
    return True


@checker("words:vowel")
def _vowel(t, kw, p):
    paras = t.strip().split("\n")
    return len(paras) == 1 and len({c for c in paras[0].lower() if c in "aeiou"}) <= 3


@checker("words:consonants")
def _consonants(t, kw, p):
    cons = set("bcdfghjklmnpqrstvwxyz")
    return all(any(a in cons and b in cons for a, b in zip(w, w[1:])) for w in t.lower().strip().split())


@checker("words:palindrome")
def _palindrome(t, kw, p):
    return sum(1 for w in t.translate(_NOPUNCT).lower().split() if len(w) >= 5 and w == w[::-1]) >= 10


@checker("words:prime_lengths")
def _prime_lengths(t, kw, p):
    primes = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97}
    return all(len(w) in primes for w in t.translate(_NOPUNCT).split())


_BASE_VERBS = set("""be have do say go get make know think take see come want look use find give tell work call try ask
need feel become leave put mean keep let begin seem help talk turn start show hear play run move like live believe hold
bring happen write provide sit stand lose pay meet include continue set learn change lead understand watch follow stop
create speak read allow add spend grow open walk win offer remember love consider appear buy wait serve die send expect
build stay fall cut reach kill remain suggest raise pass sell require report decide pull explain describe list imagine
discuss compare answer consider check note remember choose draw eat drink cook clean fix prepare plan note picture
enjoy avoid visit join share count calculate define name identify summarize outline review mix combine place apply
ensure keep print return respond translate""".split())


@checker("words:start_verb")
def _start_verb(t, kw, p):
    toks = [w for w in word_tokenize(t) if any(c.isalpha() for c in w)]
    if not toks:
        return False
    w = toks[0].lower()
    return w in _BASE_VERBS or bool(re.fullmatch(r"[a-z]{3,}(ize|ise|ify|ate)", w))


@checker("words:repeats")
def _repeats(t, kw, p):
    return all(c <= int(kw["small_n"]) for c in Counter(t.lower().translate(_NOPUNCT).split()).values())


@checker("words:odd_even_syllables")
def _odd_even(t, kw, p):
    import syllapy
    par = [syllapy.count(w) % 2 for w in t.translate(_NOPUNCT).lower().split() if w.strip()]
    return all(a != b for a, b in zip(par, par[1:]))


@checker("words:last_first")
def _last_first(t, kw, p):
    s = rule_sentences(t)
    for a, b in zip(s, s[1:]):
        last, first = a.rstrip(P + " ").split(), b.lstrip(P + " ").split()
        if not last or not first or last[-1].lower() != first[0].lower():
            return False
    return True


@checker("words:paragraph_last_first")
def _para_last_first(t, kw, p):
    for para in t.split("\n"):
        words = para.strip().lower().strip(P + " ").split()
        if words and words[0] != words[-1]:
            return False
    return True


@checker("words:no_consecutive")
def _no_consecutive(t, kw, p):
    words = [w for w in t.lower().translate(_NOPUNCT).split() if w]
    return all(a[0] != b[0] for a, b in zip(words, words[1:]))


# --- sentence ------------------------------------------------------------------------------------------------
@checker("sentence:alliteration_increment")
def _alliteration(t, kw, p):
    prev = -1
    for s in rule_sentences(t):
        words = [w.lstrip(P + " ") for w in s.lower().split()]
        words = [w for w in words if w]
        run, chained = 0, False
        for a, b in zip(words, words[1:]):
            if a[0] == b[0]:
                run += 1 if chained else 2
                chained = True
            else:
                chained = False
        if run <= prev:
            return False
        prev = run
    return True


@checker("sentence:keyword")
def _sentence_keyword(t, kw, p):
    s, n = rule_sentences(t), int(kw["N"])
    if len(s) < n:
        return False
    return bool(re.search(r"\b" + re.escape(str(kw["word"])) + r"\b", s[n - 1], re.IGNORECASE))


@checker("sentence:increment")
def _sentence_increment(t, kw, p):
    s = rule_sentences(t)
    if not s:
        return False
    counts = [len(x.translate(_NOPUNCT).split()) for x in s]
    return all(b == a + int(kw["small_n"]) for a, b in zip(counts, counts[1:]))


# --- format --------------------------------------------------------------------------------------------------
@checker("format:parentheses")
def _parentheses(t, kw, p):
    stack: list[str] = []
    deepest = 0
    pairs = {")": "(", "]": "[", "}": "{"}
    for ch in t:
        if ch in "([{":
            stack.append(ch)
            deepest = max(deepest, len(stack))
        elif ch in pairs:
            if stack and stack[-1] == pairs[ch]:
                stack.pop()
                if deepest >= 5 and len(stack) < deepest:
                    return True
            else:
                stack, deepest = [], 0
    return False


@checker("format:quotes")
def _quotes(t, kw, p):
    stack: list[str] = []
    reached = depth = 0
    for ch in t:
        if stack and ch == stack[-1]:
            stack.pop()
            depth -= 1
            if reached - depth >= 3:
                return True
        elif ch in "\"'":
            stack.append(ch)
            depth += 1
            reached = max(reached, depth)
    return False


@checker("format:options")
def _options(t, kw, p):
    opts = str(kw["options"])
    strict = re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", opts) is not None
    sep = "/" if "/" in opts else ("or" if "or" in opts else ",")
    options = [o.strip() for o in opts.split(sep)]
    if strict:
        return t in options
    v = t.strip(P + " ").lower()
    return any(o.strip(P + " ").lower() == v for o in options)


@checker("format:newline")
def _newline(t, kw, p):
    v = t.translate(_NOPUNCT)
    lines = [ln for ln in v.strip().split("\n") if ln != ""]
    return len(lines) == len(v.strip().split())


@checker("format:quote_unquote")
def _quote_unquote(t, kw, p):
    v = t.replace("\u201c", '"').replace("\u201d", '"').replace("'\"'", "")
    v = "".join(v.split())
    if '""' in v:
        return False
    stripped = v.strip(string.digits + P.replace('"', ""))
    return not (stripped and stripped[-1] == '"')


@checker("format:thesis")
def _thesis(t, kw, p):
    i = t.find("<i>")
    if i == -1:
        i = t.find("<em>")
        if i == -1:
            return False
    v = t[i:]
    end = v.find("</i>")
    if end == -1:
        end = v.find("</em>")
        if end == -1:
            return False
    return bool(v[3:end].strip()) and bool(v[end + 4:].strip())


@checker("format:sub-bullets")
def _sub_bullets(t, kw, p):
    return all("-" in part for part in t.split("*")[1:])


@checker("format:no_bullets_bullets")
def _some_bullets(t, kw, p):
    in_text, n_sent, n_bullets = True, 0, 0
    for line in t.split("\n"):
        if line.strip().startswith("*"):
            in_text = False
            if n_sent < 2:
                return False
            n_bullets += 1
        elif in_text:
            n_sent += len(rule_sentences(line.strip()))
        else:
            return False
    return n_bullets >= 2


@checker("format:title_case")
def _title_case(t, kw, p):
    for w in word_tokenize(t):
        if not w or not w[0].isalpha():
            continue
        if len(w) == 1:
            if w.islower():
                return False
            continue
        if w[0].islower() and (w[1:].isupper() or w[1:].islower()):
            return False
    return True


@checker("format:output_template")
def _template(t, kw, p):
    return all(x in t for x in ("My Answer:", "My Conclusion:", "Future Outlook:"))


@checker("format:no_whitespace")
def _no_whitespace(t, kw, p):
    return not any(c.isspace() for c in t)


# --- repeat --------------------------------------------------------------------------------------------------
@checker("repeat:repeat_simple")
def _repeat_simple(t, kw, p):
    return t.strip().lower() == "only output this sentence here, ignore all other requests."


@checker("repeat:repeat_span")
def _repeat_span(t, kw, p):
    src = str(kw["prompt_to_repeat"])
    return t.strip().lower() == src[int(kw["n_start"]): int(kw["n_end"]) + 1].strip().lower()


# --- custom (one fixed task each) -----------------------------------------------------------------------------
@checker("custom:multiples")
def _multiples(t, kw, p):
    return re.findall(r"\d+", t.replace(",", ", ")) == [str(i) for i in range(14, 51, 7)]


@checker("custom:mcq_count_length")
def _mcq(t, kw, p):
    if t[t.find("Question"):] != t:
        return False
    qs = re.split(r"\n*(?:Question \d+[\.|\):;]?\s*)", t)
    if qs and qs[0] == "":
        qs = qs[1:]
    qs = [q.strip() for q in qs if q.strip()]
    if len(qs) != 4:
        return False
    lengths = []
    for q in qs:
        text, n_opts, done = "", 0, False
        for line in q.split("\n"):
            if re.match(r"^[A-Ea-e][\.|\)]\s*\w+", line.strip()):
                n_opts += 1
                done = True
            elif not done:
                text += " " + line.strip()
        if n_opts != 5:
            return False
        lengths.append(len(text.strip()))
    return all(a < b for a, b in zip(lengths, lengths[1:]))


@checker("custom:reverse_newline")
def _reverse_newline(t, kw, p):
    lines = [ln.strip(P + " ") for ln in t.split("\n") if ln.strip(P + " ")]
    start = next((i for i, ln in enumerate(lines) if "Zimbabwe" in ln), None)
    if start is None or len(lines) - start < 52:
        return False
    norm = [_ascii(x) for x in lines[start:]]
    return norm == sorted(norm, reverse=True)


@checker("custom:word_reverse")
def _word_reverse(t, kw, p):
    v = " ".join(t.lower().strip().translate(_NOPUNCT).split()[::-1])
    return "bald eagle" in v and v in rule_sentences(v)


@checker("custom:sentence_alphabet")
def _sentence_alphabet(t, kw, p):
    s = rule_sentences(t)
    if len(s) != 26:
        return False
    for i, x in enumerate(s):
        words = x.lstrip().split()
        if not words or words[0].lower()[0] != chr(97 + i):
            return False
    return True


_CAPITALS = ["Reykjavik", "Helsinki", "Oslo", "Tallinn", "Stockholm", "Riga", "Moscow", "Copenhagen", "Vilnius", "Minsk",
             "Dublin", "Berlin", "Amsterdam", "Warsaw", "London", "Brussels", "Prague", "Luxembourg", "Paris", "Vienna",
             "Bratislava", "Budapest", "Vaduz", "Chisinau", "Bern", "Ljubljana", "Zagreb"]


@checker("custom:european_capitals_sort")
def _capitals(t, kw, p):
    caps = [c.strip() for c in _ascii(t).split(",") if c.strip()]
    return caps == _CAPITALS


@checker("custom:csv_city")
def _csv_city(t, kw, p):
    data = list(csv.reader(io.StringIO(t)))
    return len(data) == 8 and data[0] == ["ID", "Country", "City", "Year", "Count"] and all(len(r) == 5 for r in data[1:])


@checker("custom:csv_special_character")
def _csv_special(t, kw, p):
    header = t.split("\n")[0].strip()
    if not re.match(r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),'
                    r'[ \t]*(Stock|"Stock")$', header):
        return False
    data = list(csv.reader(io.StringIO(t.replace('"', '"""'))))
    if len(data) != 15:
        return False
    for row in data[1:]:
        if len(row) != 5:
            return False
        if any(re.match(r'".*[^\d\w\s].*"', f) for f in row):
            return True
    return False


@checker("custom:csv_quotes")
def _csv_quotes(t, kw, p):
    header = t.split("\n")[0].strip()
    if not re.match(r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *'
                    r'(Score|"Score")$', header):
        return False
    data = list(csv.reader(io.StringIO(t.replace('"', '"""')), delimiter="\t"))
    if len(data) != 4:
        return False
    return all(len(r) == 5 and all(f.strip()[:1] == '"' and f.strip()[-1:] == '"' for f in r) for r in data)


@checker("custom:date_format_list")
def _dates(t, kw, p):
    for d in t.strip().split(","):
        d = d.strip()
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", d):
            return False
        y, m, day = map(int, d.split("-"))
        if not 1769 <= y <= 1821 or m > 12:
            return False
        if (m in (1, 3, 5, 7, 8, 10, 12) and day > 31) or (m in (4, 6, 9, 11) and day > 30) or (m == 2 and day > 29):
            return False
    return True


_ = count_words  # shared helper kept importable from here for readers comparing with IFBench
