"""Normalized record + lossless NeMo-Gym / SFT chat round trips."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from recipe.data.formats import RowError, detect_format, from_chat, from_nemo_gym, normalize_row, to_chat, to_nemo_gym
from recipe.data.record import RecordError, make_record, record_errors, validate_record

FIX = Path(__file__).parent / "fixtures" / "data"


def _rows(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def _roundtrip(row: dict, name: str, i: int) -> dict:
    fmt = detect_format(row)
    rec = normalize_row(row, fmt, source_name=name, row_index=i)
    validate_record(rec)
    assert json.loads(json.dumps(rec)) == rec  # JSON-serialisable record
    back = to_nemo_gym(rec) if fmt == "nemo_gym" else to_chat(rec)
    # byte-for-byte in content: same keys, same order, same values
    assert json.dumps(back, ensure_ascii=False) == json.dumps(row, ensure_ascii=False), f"{name} row {i}"
    return rec


def test_every_genuine_fixture_row_round_trips(shared_dir):
    real = shared_dir / "fixtures" / "real"
    n = 0
    for f in sorted((real / "nemo_gym").glob("*.jsonl")) + sorted((real / "nemo_rl").glob("*.jsonl")):
        for i, row in enumerate(_rows(f)):
            _roundtrip(row, f.stem, i)
            n += 1
    sanity = json.loads((real / "nemo_rl" / "nemo_rl_nemo_gym_sanity.json").read_text())
    for i, row in enumerate(sanity["input"]):
        _roundtrip(row, "sanity", i)
        n += 1
    assert n >= 100


def test_own_fixture_rows_round_trip():
    files = sorted((FIX / "hub").rglob("*.jsonl")) + [FIX / "train_mixed.jsonl"]
    for f in files:
        for i, row in enumerate(_rows(f)):
            _roundtrip(row, f.parent.name, i)


def test_verifier_and_domain_derived_from_real_row_shapes():
    rl = FIX / "hub" / "Nemotron-Cascade-2-RL-data"
    recs = [from_nemo_gym(r, source_name="md", row_index=i) for i, r in enumerate(_rows(rl / "multi-domain-RL" / "train.jsonl"))]
    by = {r["domain"]: r for r in recs}
    assert set(by) == {"mcqa", "workplace_tools", "structured_output"}
    assert recs[0]["verifier"] == {"name": "mcqa", "expected_answer": "B", "grading_mode": "strict_single_letter_boxed",
                                   "options": [{"A": "Oxygen"}, {"B": "Carbon dioxide"}, {"C": "Helium"}, {"D": "Neon"}]}
    assert by["workplace_tools"]["verifier"]["name"] == "tool_call"
    assert recs[3]["tools"][0]["name"] == "email_get_email_information_by_id"
    ifr = from_nemo_gym(_rows(rl / "IF-RL" / "train.jsonl")[0], source_name="if")
    assert ifr["verifier"]["instruction_id_list"] == ["detectable_format:number_bullet_lists"]
    assert ifr["id"] == "if:100"
    swe = from_nemo_gym(_rows(rl / "SWE-RL" / "train.jsonl")[0], source_name="swe")
    assert swe["domain"] == "swe" and swe["messages"][0]["content"].startswith("Calling parse")
    assert to_nemo_gym(swe)["responses_create_params"]["input"] == []  # restored as shipped


def test_chat_rows_keep_reasoning_tool_calls_and_mode():
    sft = FIX / "hub" / "Nemotron-Cascade-2-SFT-Data"
    agent = from_chat(_rows(sft / "conversational_agent" / "train.jsonl")[0], source_name="a", domain="conversational_agent")
    assert agent["mode"] == "thinking" and agent["tools"][0]["function"]["name"] == "get_weather"
    assert agent["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    chat = from_chat(_rows(sft / "chat" / "train.jsonl")[0], source_name="c")
    assert chat["mode"] == "instruct"


def test_fresh_records_round_trip_through_both_formats():
    rec = make_record(id="tiny:math:1", domain="math", source_name="tiny-math", revision="gen-v1",
                      messages=[{"role": "user", "content": "What is 2+3?"}], mode="thinking",
                      verifier={"name": "math", "expected_answer": "5"}, metadata={"seed": 3}, license="apache-2.0")
    row = to_nemo_gym(rec)
    assert row["expected_answer"] == "5" and row["agent_ref"]["name"] == "math_with_judge_simple_agent"
    assert from_nemo_gym(json.loads(json.dumps(row)), source_name="ignored") == rec
    sft = make_record(id="tiny:sft:1", domain="chat", source_name="tiny", messages=[
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello", "reasoning_content": "greet"}])
    assert from_chat(json.loads(json.dumps(to_chat(sft))), source_name="ignored") == sft


def test_edited_verifier_is_written_back():
    row = _rows(FIX / "hub" / "Nemotron-Cascade-2-RL-data" / "MOPD" / "train.jsonl")[0]
    rec = from_nemo_gym(row, source_name="m")
    rec2 = copy.deepcopy(rec)
    rec2["verifier"]["expected_answer"] = "392"
    assert to_nemo_gym(rec)["expected_answer"] == "391"
    assert to_nemo_gym(rec2)["expected_answer"] == "392"


def test_validator_names_bad_fields():
    bad = {"id": "x", "domain": "math", "source": {"name": "s"}, "messages": [{"role": "wizard", "content": 3}],
           "mode": "fast", "verifier": {"name": "nope"}, "tools": None, "metadata": {}, "license": None}
    errs = " ".join(record_errors(bad))
    for part in ("messages.0.role", "mode", "verifier.name"):
        assert part in errs
    with pytest.raises(RecordError, match="messages"):
        validate_record({**bad, "messages": []})


def test_unreadable_rows_raise_row_error_with_reason():
    with pytest.raises(RowError) as e:
        detect_format({"foo": 1})
    assert e.value.reason == "unknown_format"
    with pytest.raises(RowError) as e:
        from_nemo_gym({"responses_create_params": {"input": 5}}, source_name="s")
    assert e.value.reason == "wrong_type"
    with pytest.raises(RowError) as e:
        from_chat({"messages": []}, source_name="s")
    assert e.value.reason == "empty_messages"


def test_genuine_fixture_files_curate_without_quarantine(shared_dir, tmp_path):
    """The real rows read through the loaders (datasets, local files) are all accepted and reconcile."""
    from recipe.data.curate import curate
    real = shared_dir / "fixtures" / "real"
    files = [real / "nemo_gym" / f for f in ("gym_instruction_following.jsonl", "gym_mcqa.jsonl", "gym_workplace_assistant.jsonl",
                                             "gym_structured_outputs.jsonl", "gym_math_with_judge.jsonl", "gym_swe_agents.jsonl")]
    files.append(real / "nemo_rl" / "nemo_rl_openai_chat_xtoken.jsonl")
    rep = curate(files, tmp_path, decontaminate_against=[real / "ifeval" / "ifeval_input_data.jsonl"])
    assert rep.quarantined == 0 and rep.reconciles and rep.rows_in == 3 * 5 + 1 + 5
    assert {"instruction_following", "mcqa", "workplace_tools", "structured_output", "math", "swe", "chat"} <= set(rep.domains)
    gym = [json.loads(l) for l in (tmp_path / "nemo_gym" / "train.jsonl").read_text().splitlines()]
    originals = {json.dumps(json.loads(l), sort_keys=True) for f in files[:-1] for l in f.read_text().splitlines() if l.strip()}
    assert gym and all(json.dumps(r, sort_keys=True) in originals for r in gym)  # written rows are the shipped rows
