"""Splits and per-stage prompt pools, and the n-gram index."""
from __future__ import annotations

from collections import Counter

from recipe.config import load_config
from recipe.config.data_section import StagePool
from recipe.data.decontam import NgramIndex
from recipe.data.mixture import build_pool, split_of
from recipe.data.record import make_record
from recipe.data.text import exact_key


def _recs(domain: str, n: int) -> list[dict]:
    return [make_record(id=f"{domain}:{i}", domain=domain, source_name="s",
                        messages=[{"role": "user", "content": f"{domain} question number {i}"}]) for i in range(n)]


def test_split_is_deterministic_disjoint_and_near_fraction():
    ids = [f"r{i}" for i in range(4000)]
    a = {i: split_of(i, seed=0, validation_fraction=0.1) for i in ids}
    assert a == {i: split_of(i, seed=0, validation_fraction=0.1) for i in ids}
    val = {i for i, s in a.items() if s == "validation"}
    train = {i for i, s in a.items() if s == "train"}
    assert not val & train and len(val) + len(train) == 4000
    assert 300 < len(val) < 500
    assert val != {i for i in ids if split_of(i, seed=1, validation_fraction=0.1) == "validation"}


def test_curated_splits_share_no_row_or_text(tmp_path):
    import json
    from recipe.data.curate import curate
    from recipe.config.data_section import DataSection
    rows = [{"messages": [{"role": "user", "content": f"Question {i}: what is {i} plus {i}?"},
                          {"role": "assistant", "content": str(2 * i)}]} for i in range(300)]
    rows += rows[:50]  # exact repeats must not leak across the split
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rep = curate([src], tmp_path / "out", config=DataSection(split={"validation_fraction": 0.3, "seed": 7}))
    load = lambda s: [json.loads(l) for l in (tmp_path / "out" / "records" / f"{s}.jsonl").read_text().splitlines()]
    tr, va = load("train"), load("validation")
    assert tr and va and len(tr) + len(va) == 300 == rep.kept
    assert not {r["id"] for r in tr} & {r["id"] for r in va}
    assert not {exact_key(r) for r in tr} & {exact_key(r) for r in va}


def test_paper_multi_domain_pool_is_55_30_15_and_seeded():
    pool = load_config("paper").data.pools["multi_domain_rl"]
    assert pool.weights == {"mcqa": 0.55, "workplace_tools": 0.30, "structured_output": 0.15}
    by = {d: _recs(d, 500) for d in ("mcqa", "workplace_tools", "structured_output", "math")}
    rows, info = build_pool(by, StagePool(weights=pool.weights, size=200), seed=0, stage="multi_domain_rl")
    assert Counter(r["domain"] for r in rows) == {"mcqa": 110, "workplace_tools": 60, "structured_output": 30}
    assert len({r["id"] for r in rows}) == 200
    again, _ = build_pool(by, StagePool(weights=pool.weights, size=200), seed=0, stage="multi_domain_rl")
    other, _ = build_pool(by, StagePool(weights=pool.weights, size=200), seed=1, stage="multi_domain_rl")
    assert [r["id"] for r in rows] == [r["id"] for r in again] != [r["id"] for r in other]
    # without a size: the largest pool the scarcest domain allows, no repetition
    rows, info = build_pool(by | {"structured_output": _recs("structured_output", 30)},
                            StagePool(weights=pool.weights), seed=0, stage="multi_domain_rl")
    assert info["counts"] == {"mcqa": 110, "workplace_tools": 60, "structured_output": 30}


def test_mopd_pool_matches_release_and_reports_missing_rlhf():
    pool = load_config("paper").data.pools["mopd"]
    released = {"math": 1853, "instruction_following": 1854, "workplace_tools": 610, "mcqa": 927, "structured_output": 927}
    assert {d: pool.weights[d] for d in released} == released and sum(released.values()) == 6171
    by = {d: _recs(d, n) for d, n in released.items()}
    rows, info = build_pool(by, pool, seed=0, stage="mopd")
    assert info["missing_domains"] == ["rlhf"]
    assert info["counts"] == released | {"rlhf": 0} and len(rows) == 6171
    _, short = build_pool(by, StagePool(weights={"math": 1, "mcqa": 1}, size=4000), seed=0, stage="x")
    assert short["shortfall"] == {"math": 2000 - 1853, "mcqa": 2000 - 927}  # never padded by repeats


def test_ngram_index_hits_misses_and_row_boundaries():
    item = "the committee approved the new budget for the regional library after a long public debate on tuesday"
    idx = NgramIndex.build([("ev:1", item)], n=13)
    hits = idx.check_batch([
        "Before: " + item.upper() + "!!!",         # case/punctuation do not hide it
        "the committee approved the new budget for the regional library after a long",  # exactly 13 words
        "the committee approved the new budget for the regional library after a",       # 12 words: no 13-gram
        "library after a long public debate",     # row 4 + row 5 together would contain a 13-gram:
        "on tuesday the committee approved the new budget",  # windows never cross rows
    ])
    assert hits == ["ev:1", "ev:1", None, None, None]
    assert NgramIndex.build([("ev:1", item)], n=13).check_batch([item], min_overlap=5) == ["ev:1"]  # 17 words: 5 shared 13-grams
    assert NgramIndex.build([("ev:1", item)], n=13).check_batch([item], min_overlap=6) == [None]
