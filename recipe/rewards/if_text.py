"""Text helpers shared by the instruction checkers (word, sentence and paragraph splitting).

IFEval/IFBench use NLTK tokenisers; this project avoids NLTK data downloads, so these are regex
equivalents: ``count_words`` = NLTK ``RegexpTokenizer(r"\\w+")`` (identical), ``word_tokenize`` splits
words and punctuation (differs from NLTK on contractions such as ``don't``), ``split_into_sentences``
follows IFEval's rule-based splitter (abbreviations, decimals, initials) in simplified form.
"""
from __future__ import annotations

import re
import string

PUNCT = string.punctuation

# NLTK's English stop-word list (179 words), used by IFBench ratio:stop_words.
STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him
his himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom
this that that'll these those am is are was were be been being have has had having do does did doing a an the
and but if or because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such no nor not only own same so than too very s t can will just don
don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn
hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()
)

_ABBREV = r"(Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|Inc|Ltd|Co|No|Fig|U\.S)"


def count_words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def word_tokenize(text: str) -> list[str]:
    return re.findall(r"\w+(?:[-']\w+)*|[^\w\s]", text)


def split_into_sentences(text: str) -> list[str]:
    """Rule-based splitter: ends at . ! ? (and runs of them) followed by space/newline or end."""
    t = " " + text.replace("\n", " <nl> ") + "  "
    t = re.sub(r"\b" + _ABBREV + r"\.", lambda m: m.group(0).replace(".", "<prd>"), t)
    t = re.sub(r"(\d)\.(\d)", r"\1<prd>\2", t)
    t = re.sub(r"\b([A-Z])\.(?=\s*[A-Z]\.)", r"\1<prd>", t)  # initials such as J. R.
    t = re.sub(r"([.!?][\"'”’)\]]*)(\s)", r"\1<stop>\2", t)
    t = t.replace("<nl>", "<stop>")  # line breaks end sentences (lists, headings)
    parts = [p.replace("<prd>", ".").strip() for p in t.split("<stop>")]
    return [p for p in parts if p]


_PUNKT_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
                 "no", "fig", "u.s", "a.m", "p.m", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
                 "oct", "nov", "dec", "approx", "dept", "est", "vol", "cf", "al"}


def punkt_sentences(text: str) -> list[str]:
    """Sentences the way IFEval's reference counts them (NLTK punkt, English), without NLTK's data download.

    Punkt treats every whitespace run alike, so a line break alone never ends a sentence; a sentence ends at
    ``.``/``!``/``?`` (plus closing quotes/brackets) followed by whitespace, except after a known abbreviation, an
    initial (``J.``), a number (list markers ``1.``, ``2.``) or an ellipsis, and except before a lowercase word
    (punkt's orthographic heuristic).
    """
    toks = re.findall(r"\S+", text)
    sents, cur = [], []
    for i, tok in enumerate(toks):
        cur.append(tok)
        core = tok.rstrip("\"')]}”’")
        if not core or core[-1] not in ".!?" or i == len(toks) - 1:
            continue
        if core[-1] == ".":
            word = core[:-1].lstrip("\"'([{“‘").lower()
            if (word in _PUNKT_ABBREV or re.fullmatch(r"[a-z]", word) or re.fullmatch(r"\d+", word)
                    or core.endswith("..")):
                continue
        nxt = toks[i + 1].lstrip("\"'([{“‘*")
        if nxt[:1].islower():
            continue
        sents.append(" ".join(cur))
        cur = []
    if cur:
        sents.append(" ".join(cur))
    return sents


def split_paragraphs_blank(text: str) -> list[str]:
    return re.split(r"\n\n", text)


def strip_punct(word: str) -> str:
    return word.strip(PUNCT + " ")


def compare(count: int, relation: str | None, n: int) -> bool:
    """IFEval relations: 'less than' → count < n; 'at least' → count >= n; also 'at most'/'exactly'."""
    rel = (relation or "at least").strip().lower()
    if rel == "less than":
        return count < n
    if rel == "at least":
        return count >= n
    if rel == "at most":
        return count <= n
    if rel in ("exactly", "equal to", "equals"):
        return count == n
    if rel == "more than":
        return count > n
    raise ValueError(f"unknown relation {relation!r} (expected 'less than' or 'at least')")
