"""Held out means held out: no report or selection prompt occurs in training, checked by the data phase; the
agentic SWE split key is the issue and the buggy function; swe and swe_agentic hold out by repository."""
import random

import pytest

from recipe.config.loader import load_config
from recipe.domains import build_tiny_splits, data_phase, swe_domain
from recipe.domains.held_out import HeldOutError, check_held_out, held_out_overlap
from recipe.runs import RunDir


def _small_cfg():
    return load_config("tiny", ["domains.tiny.train_items=30", "domains.tiny.val_items=5",
                                "domains.tiny.selection_items=4"])


def test_a_planted_verbatim_repeat_fails_the_data_phase_naming_the_domain(tmp_path, monkeypatch):
    cfg = _small_cfg()
    built = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    held = built["mcqa"]["val"][2]
    planted = {**built["mcqa"]["train"][0], "messages": [
        {"role": "user", "content": "  " + held["messages"][0]["content"].replace(" ", "\n ", 3) + " \t"}]}
    built["mcqa"]["train"].append(planted)
    monkeypatch.setattr(data_phase, "build_tiny_splits", lambda *a, **k: built)
    run = RunDir(tmp_path / "run")
    with pytest.raises(HeldOutError, match=r"mcqa: 1 report and 0 selection prompt"):
        data_phase.prepare_data(run, cfg)
    assert not run.is_done(data_phase.DATA_PHASE)


def test_the_tiny_splits_hold_out_every_prompt_and_the_card_states_0(tmp_path):
    cfg = load_config("tiny")
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 1)
    assert held_out_overlap(splits) == {d: {"val": 0, "select": 0} for d in cfg.domains.names}
    assert check_held_out(splits)["swe_agentic"] == {"val": 0, "select": 0}


def _repo_with_other_functions(repo, spec, rng):
    """The same bug in a file whose other functions differ (constants and order of the unbroken ones)."""
    while True:
        other = swe_domain.generate_repo(rng, spec)
        if other["issue"] == repo["issue"] and other["bug"] == repo["bug"] and other["files"] != repo["files"]:
            return other


def test_agentic_records_differing_only_in_unrelated_functions_share_a_split_key():
    spec = load_config("tiny").domains.tiny
    rng = random.Random(7)
    repo = swe_domain.generate_repo(rng, spec)
    other = _repo_with_other_functions(repo, spec, rng)
    assert swe_domain._agentic_key(repo) == swe_domain._agentic_key(other)
    assert swe_domain._repo_key(repo) != swe_domain._repo_key(other)  # they are different repositories


def test_agentic_tasks_land_in_one_split_and_swe_repositories_are_held_out_across_domains():
    cfg = load_config("tiny")
    splits = build_tiny_splits(cfg.domains.tiny, ["swe", "swe_agentic"], 0)
    agentic = splits["swe_agentic"]
    bug = {s: {(r["verifier"]["issue"], _bug_of(r)) for r in agentic[s]} for s in ("train", "val", "select")}
    assert not bug["train"] & (bug["val"] | bug["select"])  # the same task never trains and reports
    # a swe report / selection repository never trains swe_agentic, and the other way round
    repo = {(d, s): {(r["verifier"]["issue"], tuple(sorted(r["verifier"]["files"].items()))) for r in splits[d][s]}
            for d in ("swe", "swe_agentic") for s in ("train", "val", "select")}
    for a, b in (("swe", "swe_agentic"), ("swe_agentic", "swe")):
        assert not (repo[a, "val"] | repo[a, "select"]) & repo[b, "train"], (a, b)


def _bug_of(record):
    """The broken function of an agentic record's repository, read back from its files and issue."""
    (text,) = record["verifier"]["files"].values()
    name = record["verifier"]["issue"].split("(")[0]
    return next(block for block in text.split("def ")[1:] if block.startswith(name + "("))


def test_data_written_under_an_earlier_split_rule_is_drawn_and_checked_again(tmp_path):
    cfg = _small_cfg()
    run = RunDir(tmp_path / "run")
    data_phase.prepare_data(run, cfg)
    m = run.read_manifest(data_phase.DATA_PHASE)
    assert m["inputs"]["split_rule"] == data_phase.SPLIT_RULE
    old = {**m, "inputs": {k: v for k, v in m["inputs"].items() if k != "split_rule"}, "timings": {"wall_s": -1}}
    run.write_manifest(data_phase.DATA_PHASE, old)  # as an earlier version of the data phase left it
    data_phase.prepare_data(run, cfg)
    again = run.read_manifest(data_phase.DATA_PHASE)
    assert again["inputs"]["split_rule"] == data_phase.SPLIT_RULE and again["timings"]["wall_s"] >= 0
