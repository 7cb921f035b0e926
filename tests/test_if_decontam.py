"""13-gram decontamination of the registry IF generator (recipe.domains.if_decontam): no request of the bank, and so
no generated request, shares a 13-gram with IFEval's or IFBench's prompts; a request that does stops the data phase;
the data card reports the counts. The genuine prompts are read from ../shared (skipped with the reason where absent);
the failure case uses a benchmark file written here."""
from __future__ import annotations

import json
import pytest

from recipe.config import load_config
from recipe.data.decontam import NgramIndex
from recipe.data.eval_set import eval_items_from_file
from recipe.data.text import words
from recipe.domains import build_tiny_splits, if_decontam
from recipe.domains.if_requests import TEMPLATES, TOPICS

BANK = sorted({t.format(topic=x) for t in TEMPLATES for x in TOPICS})


def _cfg(mirror):
    return load_config("small", [f"benchmarks.mirror={mirror}"])


def _splits(prompts):
    return {"instruction_following": {"train": [{"messages": [{"role": "user", "content": p}]} for p in prompts],
                                      "val": [], "select": []}}


def test_the_mirror_files_are_the_paper_profiles():
    from recipe.eval.paper_values import profile_benchmarks
    suites = profile_benchmarks("paper").suites
    assert {n: suites[n].source.mirror_file for n in ("ifeval", "ifbench")} == if_decontam.MIRROR_FILES


def test_no_request_of_the_bank_shares_a_13gram_with_ifeval_or_ifbench(shared_dir):
    files = [shared_dir / if_decontam.MIRROR_FILES[n] for n in ("ifeval", "ifbench")]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        pytest.skip(f"genuine IFEval / IFBench prompts not at hand: {missing}")
    index = NgramIndex.build([item for f in files for item in eval_items_from_file(f)], n=13)
    assert len(index) == 541 + 300
    assert index.check_batch(BANK) == [None] * len(BANK)
    assert sum(len(words(q)) >= 13 for q in BANK) > 0  # some requests are long enough to be checked at all
    # the data phase's own check on generated splits: 0 requests hit, both benchmarks checked
    cfg = _cfg(shared_dir)
    spec = cfg.domains.tiny.model_copy(update={"train_items": 120, "val_items": 20, "selection_items": 5})
    report = if_decontam.measure(cfg, build_tiny_splits(spec, ["instruction_following"], seed=0))
    assert report["ifeval"]["prompts"] == 541 and report["ifbench"]["prompts"] == 300
    assert report["ifeval"]["request_hits"] == report["ifbench"]["request_hits"] == 0


def test_a_request_sharing_a_13gram_stops_the_data_phase(tmp_path):
    long = next(q for q in BANK if len(words(q)) >= 13)
    (tmp_path / "ifeval").mkdir()
    rows = [{"key": 1, "prompt": f"Please do this. {long} Use no commas.", "instruction_id_list": [], "kwargs": []},
            {"key": 2, "prompt": "Something else entirely, short.", "instruction_id_list": [], "kwargs": []}]
    (tmp_path / "ifeval" / "input_data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = _cfg(tmp_path)
    clean = if_decontam.measure(cfg, _splits(["Write a short note about baking bread. Use no commas."]))
    assert clean["ifeval"] == {"file": "input_data.jsonl", "prompts": 2, "requests": 1, "request_hits": 0,
                               "long_requests": 0, "records": 1, "prompt_hits": 0}
    with pytest.raises(ValueError, match="share a 13-gram with ifeval"):
        if_decontam.measure(cfg, _splits([f"{long} Wrap your entire response with double quotation marks."]))


def test_the_card_section_counts_or_says_why_not(tmp_path, monkeypatch):
    monkeypatch.delenv("RECIPE_BENCHMARK_MIRROR", raising=False)
    cfg = _cfg(tmp_path)  # an empty mirror: IFEval not at hand
    text = if_decontam.card_section(cfg, _splits(["Write a short note about baking bread. Use no commas."]))
    assert "| ifeval | - | - | not checked: no ifeval/input_data.jsonl in the benchmark mirror" in text
    assert "IFBench's instruction types are never drawn" in text
    assert if_decontam.card_section(load_config("tiny"), {}) == ""  # the tiny IF generator: no section
