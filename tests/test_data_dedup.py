"""Exact and near dedup units: what counts as the same text, and the dedup scope."""
from __future__ import annotations

from recipe.data.dedup import Deduper, minhash_signatures
from recipe.data.record import make_record
from recipe.data.text import exact_key, words


def _rec(text: str, role: str = "user") -> dict:
    return make_record(id=text[:20], domain="math", source_name="s", messages=[{"role": role, "content": text}])


def test_exact_key_ignores_case_and_spacing_but_not_symbols_or_roles():
    assert exact_key(_rec("What is  3+4?\n")) == exact_key(_rec("what is 3+4?"))
    assert exact_key(_rec("What is 3+4?")) != exact_key(_rec("What is 3*4?"))
    assert exact_key(_rec("hi", "user")) != exact_key(_rec("hi", "system"))
    assert words("Don't STOP—now!") == ["don", "t", "stop", "now"]


LONG = ("the river otter is a semiaquatic mammal that lives along the banks of rivers and lakes where it hunts fish "
        "crayfish and frogs at night and rests in dens dug into the soft earth under tree roots")


def test_near_duplicates_found_within_scope_only():
    texts = [LONG, LONG + " today", "3+4 = 7 and " + LONG[:40], "3*4 = 12 and " + LONG[:40]]
    sigs = minhash_signatures(texts, num_perm=128, shingle_words=5)
    d = Deduper(threshold=0.7, num_perm=128)
    got = [d.check(f"r{i}", "a", exact_key(_rec(t)), s) for i, (t, s) in enumerate(zip(texts, sigs))]
    assert got == [(None, None), ("near_duplicate", "r0"), (None, None), (None, None)]
    # per_source: the same text in another source is kept; in the same source it is an exact duplicate
    d = Deduper(scope="per_source", num_perm=128)
    k = exact_key(_rec(LONG))
    assert d.check("a1", "A", k, sigs[0]) == (None, None)
    assert d.check("b1", "B", k, sigs[0]) == (None, None)
    assert d.check("a2", "A", k, sigs[0]) == ("exact_duplicate", "a1")
