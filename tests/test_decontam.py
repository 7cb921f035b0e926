"""Decontamination is exact: hash hits are re-verified word by word, so a collision never drops a clean row; the
vectorised word split agrees with recipe.data.text.words on ASCII and Unicode text."""
from __future__ import annotations

import numpy as np

import recipe.data.decontam as decontam
from recipe.data.decontam import NgramIndex
from recipe.data.text import words

EVAL = "the quick brown fox jumps over the lazy dog while seven wise owls watch from an old oak tree"


def test_forced_hash_collision_never_drops_a_clean_row(monkeypatch):
    # An order-blind n-gram hash: any permutation of an eval 13-gram collides with it.
    def weak(word_h, n):
        m = len(word_h) - n + 1
        if m <= 0:
            return np.zeros(0, np.uint64)
        c = np.concatenate([[np.uint64(0)], np.cumsum(word_h % np.uint64(1 << 20))]).astype(np.uint64)
        return c[n:] - c[:m]

    monkeypatch.setattr(decontam, "_window_hashes", weak)
    idx = NgramIndex.build([("ev:1", EVAL)], n=13)
    gram = words(EVAL)[:13]
    shuffled = " ".join(reversed(gram))  # same words, other order: a collision, not a leak
    leaked = "intro words " + " ".join(gram) + " outro"
    # the weak hash really collides for the clean row
    assert np.isin(weak(decontam._batch_words([shuffled])[0], 13), idx.hashes).any()
    assert idx.check_batch([shuffled, leaked, "nothing to see here"]) == [None, "ev:1", None]


def test_rows_are_matched_like_words_tokenizes_them():
    idx = NgramIndex.build([("ev:u", "Ünïcode façade: Déjà-vu, naïve café; " + EVAL)], n=13)
    rows = ["DÉJÀ VU NAÏVE café the quick brown fox jumps over the lazy dog while seven",  # Unicode row, leak
            "unicode facade deja vu naive cafe the quick brown fox jumps over the lazy dog",  # accents differ
            "THE QUICK, BROWN fox -- jumps over the lazy dog (while) seven wise owls!"]  # ASCII, punctuation
    assert idx.check_batch(rows) == ["ev:u", None, "ev:u"]


def test_windows_never_join_two_rows():
    idx = NgramIndex.build([("ev:1", EVAL)], n=13)
    half = words(EVAL)
    a, b = " ".join(half[:7]), " ".join(half[7:13])  # the 13-gram split over two consecutive rows
    assert idx.check_batch([a, b]) == [None, None]
    assert idx.check_batch([a + " " + b]) == ["ev:1"]


def test_word_hashes_equal_for_equal_words_in_both_paths():
    h_ascii, first = decontam._batch_words(["Cafe au lait", "x"])
    h_uni, _ = decontam._batch_words(["CAFE au lait ü"])
    assert list(first) == [0, 3, 4] and (h_ascii[:3] == h_uni[:3]).all()


def test_a_template_shared_by_items_of_one_benchmark_is_not_an_item():
    template = "solve the following problem and put the final answer inside a box at the very end please"
    a = f"{template} alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
    b = f"{template} one two three four five six seven eight nine ten eleven twelve thirteen"
    c = template  # all template: nothing of its own to match
    idx = NgramIndex.build([("m:a", a), ("m:b", b), ("m:c", c)], n=13, groups=["m", "m", "m"], drop_shared=True)
    assert idx.check_batch([f"Hint: {template}. Go!", a, f"copied: {b}"]) == [None, "m:a", "m:b"]
    assert idx.boilerplate_only == 1 and idx.stats()["benchmarks"]["m"] == {"items": 3, "too_short": 0,
                                                                             "boilerplate_only": 1}
    assert idx.group_of("m:b") == "m"
    # shared within one benchmark only: the same words as one item of another benchmark are that item's text
    two = NgramIndex.build([("m:a", a), ("m:b", b), ("o:1", f"{template} x")], n=13, groups=["m", "m", "o"],
                           drop_shared=True)
    assert two.check_batch([f"Hint: {template}. Go!"]) == ["o:1"]
    plain = NgramIndex.build([("m:a", a), ("m:b", b)], n=13)  # without groups every n-gram is indexed
    assert plain.check_batch([template]) == ["m:a"]
