"""Held out by prompt: the curation split and the released data phase's val/select split hash the user turns, so
an SFT row and an RL row with one prompt land on the same side; the curation counts prompts in both train and
validation (0) and its card says so; a curated folder with such prompts is refused by the data phase."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipe.config.data_section import DataSection
from recipe.data.curate import curate
from recipe.data.released_splits import held_out_overlap, released_splits
from recipe.data.text import prompt_key


def _prompt(i: int) -> str:
    return f"Question number {i}: how many pebbles fit in jar {i * 7 + 3}?"


def _sft(i: int) -> dict:
    return {"uuid": f"sft{i}", "messages": [{"role": "system", "content": "Think step by step."},
                                            {"role": "user", "content": _prompt(i)},
                                            {"role": "assistant", "content": f"About {i * 11} pebbles, by volume."}]}


def _rl(i: int) -> dict:
    return {"id": f"rl{i}", "responses_create_params": {"input": [{"role": "user", "content": "  " + _prompt(i).upper()}]},
            "expected_answer": str(i * 11), "agent_ref": {"type": "responses_api_agents", "name": "math_agent"}}


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_prompt_key_reads_the_user_turns_only():
    a = {"id": "a", "messages": [{"role": "user", "content": "Same  prompt"}, {"role": "assistant", "content": "x"}]}
    b = {"id": "b", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "same prompt"}]}
    c = {"id": "c", "messages": [{"role": "user", "content": "other prompt"}]}
    assert prompt_key(a) == prompt_key(b) != prompt_key(c)


def test_sft_and_rl_rows_with_one_prompt_land_on_the_same_side(tmp_path):
    n = 40
    sft, rl = _write(tmp_path / "sft.jsonl", [_sft(i) for i in range(n)]), _write(tmp_path / "rl.jsonl", [_rl(i) for i in range(n)])
    data = DataSection(dedup={"near": False}, split={"validation_fraction": 0.5, "seed": 3})
    rep = curate([sft, rl], tmp_path / "out", config=data)
    assert rep.kept == 2 * n  # both kinds are kept: an answer makes the SFT row another row
    side = {}
    for split in ("train", "validation"):
        for line in (tmp_path / "out" / "records" / f"{split}.jsonl").read_text().splitlines():
            r = json.loads(line)
            side[r["id"]] = split
    pairs = [(side[k], side[j]) for k, j in zip(sorted(k for k in side if "sft" in k), sorted(k for k in side if "rl" in k))]
    assert len(pairs) == n and all(a == b for a, b in pairs)
    assert {a for a, _ in pairs} == {"train", "validation"}  # both sides used: the test can see a split pair
    assert rep.held_out_prompt_overlap == 0
    assert "prompts in both train and validation: 0" in (tmp_path / "out" / "README.md").read_text()


def _record(rid: str, domain: str, i: int, answer: bool) -> dict:
    msgs = [{"role": "user", "content": _prompt(i)}] + ([{"role": "assistant", "content": "ok"}] if answer else [])
    return {"id": rid, "domain": domain, "messages": msgs, "verifier": None, "license": "x", "source": {"name": "t"}}


def test_val_and_select_keep_one_prompt_together_across_domains(tmp_path):
    train = [_record(f"t{i}", "math", 1000 + i, True) for i in range(4)]
    held = [_record(f"s{i}", "math", i, True) for i in range(30)] + [_record(f"r{i}", "chat", i, False) for i in range(30)]
    _write(tmp_path / "records" / "train.jsonl", train + [_record("tc", "chat", 999, False)])
    _write(tmp_path / "records" / "validation.jsonl", held)
    sp = released_splits(tmp_path, ["math", "chat"], seed=5)
    where = {r["id"]: s for d in sp.values() for s in ("val", "select") for r in d[s]}
    assert all(where[f"s{i}"] == where[f"r{i}"] for i in range(30))
    assert set(where.values()) == {"val", "select"}


def test_a_prompt_in_train_and_validation_is_refused(tmp_path):
    _write(tmp_path / "records" / "train.jsonl", [_record("t0", "math", 1, True), _record("t1", "chat", 2, False)])
    _write(tmp_path / "records" / "validation.jsonl", [_record("v0", "chat", 1, False), _record("v1", "math", 3, True)])
    assert held_out_overlap([_record("t0", "math", 1, True)], [_record("v0", "chat", 1, False)]) == 1
    with pytest.raises(ValueError, match="1 prompts are in both"):
        released_splits(tmp_path, ["math", "chat"], seed=0)
