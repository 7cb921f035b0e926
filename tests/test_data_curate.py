"""Curation end to end, in-process: loaders, quarantine, decontamination,
dedup, reconciling counts, CLI, report table/chart and the generated card."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipe.config import load_config
from recipe.config.data_section import DataSection
from recipe.data.curate import CurationReport, curate
from recipe.data.loaders import hub_configs, iter_lines, load_released, resolve_inputs

FIX = Path(__file__).parent / "fixtures" / "data"
RL = FIX / "hub" / "Nemotron-Cascade-2-RL-data"
SFT = FIX / "hub" / "Nemotron-Cascade-2-SFT-Data"


def _jsonl(p: Path) -> list[dict]:
    return [json.loads(l) for l in p.read_text(encoding="utf-8").splitlines() if l.strip()]


def test_hub_layout_dirs_resolve_every_released_config():
    data = load_config("tiny").data
    assert sorted(hub_configs(RL)) == sorted(data.rl_data.configs)
    assert sorted(hub_configs(SFT)) == sorted(data.sft_data.configs)
    srcs = {s.config: s for s in resolve_inputs([RL, SFT], data)}
    assert srcs["MOPD"].revision == data.rl_data.revision and srcs["MOPD"].license == "odc-by"
    assert srcs["MOPD"].fmt == "nemo_gym" and srcs["science"].fmt == "messages" and srcs["science"].domain == "science"
    recs = list(load_released(SFT, "conversational_agent", data))
    assert recs[0]["source"] == {"name": "nvidia/Nemotron-Cascade-2-SFT-Data/conversational_agent",
                                 "revision": data.sft_data.revision}
    assert recs[0]["domain"] == "conversational_agent"
    with pytest.raises(ValueError, match="no config 'code'"):
        list(load_released(SFT, "code", data))


def test_line_reader_keeps_exact_bytes():
    raw = (FIX / "bad_rows.jsonl").read_bytes().split(b"\n")
    got = dict(iter_lines(FIX / "bad_rows.jsonl"))
    assert got[5] == raw[4] and b"\xe9" in got[5]  # the invalid UTF-8 line, byte for byte


def test_bad_rows_are_quarantined_with_id_and_reason(tmp_path):
    data = DataSection(limits={"max_row_bytes": 100_000, "max_messages": 50})
    rep = curate([FIX / "bad_rows.jsonl"], tmp_path, config=data)
    reasons = {q["id"]: q["reason"] for q in rep.quarantine}
    assert reasons == {
        "bad_rows:row2": "malformed_json", "bad_rows:nomsg": "unknown_format", "bad_rows:wt": "wrong_type",
        "bad_rows:row5": "invalid_utf8", "bad_rows:badrole": "invalid_record", "bad_rows:empty": "empty_messages",
        "bad_rows:blank": "empty_messages", "bad_rows:row10": "too_long", "bad_rows:row11": "wrong_type",
        "bad_rows:noinput": "missing_field", "bad_rows:row13": "invalid_utf8"}
    assert rep.rows_in == 13 and rep.kept == 2 and rep.quarantined == 11 and rep.blank_lines == 1
    assert rep.reconciles
    assert len(_jsonl(tmp_path / "quarantine.jsonl")) == 11
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk["quarantined"] == 11 and on_disk["reconciles"] is True
    assert {q["reason"] for q in on_disk["quarantine"]} >= {"malformed_json", "invalid_utf8", "too_long"}


def test_decontamination_and_dedup_drop_with_reasons(tmp_path):
    data = DataSection(dedup={"threshold": 0.6, "shingle_words": 3})
    rep = curate([FIX / "train_mixed.jsonl"], tmp_path, decontaminate_against=[FIX / "eval_set.jsonl"], config=data)
    dropped = {d["id"]: (d["reason"], d.get("matched_eval_item") or d.get("duplicate_of")) for d in rep.dropped_rows}
    assert dropped == {"train_mixed:leak1": ("contaminated", "eval_set.jsonl:1"),
                       "train_mixed:dup1": ("exact_duplicate", "train_mixed:clean1"),
                       "train_mixed:near2": ("near_duplicate", "train_mixed:near1")}
    assert rep.dropped == {"contaminated": 1, "exact_duplicate": 1, "near_duplicate": 1}
    assert rep.kept == 2 and rep.reconciles
    assert rep.decontamination["index"]["too_short"] == 1  # "Short item." is below 13 words


def test_ngram_length_is_configurable(tmp_path):
    # a 13-gram leak is also a 20-gram leak only if it is long enough: the walrus prompt has 21 words
    rep = curate([FIX / "train_mixed.jsonl"], tmp_path, decontaminate_against=[FIX / "eval_set.jsonl"],
                 config=DataSection(decontam={"ngram": 30}))
    assert rep.dropped["contaminated"] == 0


def test_cross_source_dedup_and_outputs(tmp_path):
    rep = curate([RL, SFT], tmp_path, config=load_config("tiny", overrides=["data.dedup.threshold=0.8"]).data)
    assert rep.rows_in == 20 + 10 and rep.reconciles
    # MOPD repeats three multi-domain rows: dropped as exact duplicates across configs; the two structured-output
    # prompts share system prompt and schema and differ in three words: a near duplicate at threshold 0.8
    assert rep.dropped == {"contaminated": 0, "exact_duplicate": 3, "near_duplicate": 1}
    near = [d for d in rep.dropped_rows if d["reason"] == "near_duplicate"][0]
    assert near["id"].endswith("multi-domain-RL:SO-2") and near["duplicate_of"].endswith("multi-domain-RL:SO-1")
    recs = _jsonl(tmp_path / "records" / "train.jsonl") + (
        _jsonl(tmp_path / "records" / "validation.jsonl") if (tmp_path / "records" / "validation.jsonl").exists() else [])
    assert len(recs) == rep.kept and len({r["id"] for r in recs}) == rep.kept
    gym = sum(rep.outputs.get(f"nemo_gym/{s}.jsonl", {}).get("rows", 0) for s in ("train", "validation"))
    sft = sum(rep.outputs.get(f"sft/{s}.jsonl", {}).get("rows", 0) for s in ("train", "validation"))
    assert gym + sft == rep.kept and sft == 10
    row = _jsonl(tmp_path / "nemo_gym" / "train.jsonl")[0]
    assert "responses_create_params" in row and "recipe_record" not in row  # shipped rows come back as shipped
    assert rep.pools["if_rl"]["counts"] == {"instruction_following": 7}


def test_cli_curate_and_card(tmp_path, project_root):
    from huggingface_hub import DatasetCard
    from typer.testing import CliRunner

    from recipe.cli.data_cmd import app
    out = tmp_path / "cur"
    r = CliRunner().invoke(app, ["curate", "--input", str(RL / "MOPD" / "train.jsonl"), "--input", str(FIX / "bad_rows.jsonl"),
                                 "--format", "auto", "--decontaminate-against", str(FIX / "eval_set.jsonl"),
                                 "--out", str(out), "--set", "data.limits.max_row_bytes=100000"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    assert set(rep) >= {"rows_in", "kept", "dropped", "quarantined", "quarantine"}
    assert rep["rows_in"] == 6 + 13 and rep["quarantined"] == 11 and rep["reconciles"]
    card = DatasetCard.load(out / "README.md")
    assert card.data.license == "other" and card.data.size_categories == ["n<1K"]
    assert {c["config_name"] for c in card.data.configs} >= {"records", "nemo_gym"}
    assert "Known gaps" in card.text and "quarantined 11" in card.text
    r = CliRunner().invoke(app, ["card", "--report", str(out), "--out", str(tmp_path / "c.md"), "--name", "demo"])
    assert r.exit_code == 0 and DatasetCard.load(tmp_path / "c.md").data.pretty_name == "demo"
    r = CliRunner().invoke(app, ["curate", "--input", str(tmp_path / "missing.jsonl"), "--out", str(out)])
    assert r.exit_code == 2 and "does not exist" in r.output


def test_report_table_and_chart(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from recipe.data.curation_report_views import plot_report, report_table
    rep = curate([FIX / "train_mixed.jsonl", FIX / "bad_rows.jsonl"], tmp_path,
                 decontaminate_against=[FIX / "eval_set.jsonl"])
    df = report_table(tmp_path / "report.json")
    assert list(df.index) == ["train_mixed", "bad_rows", "total"]
    tot = df.loc["total"]
    assert tot["rows_in"] == tot[["kept", "contaminated", "exact_duplicate", "near_duplicate", "quarantined"]].sum()
    assert report_table(rep).equals(report_table(CurationReport.load(tmp_path)))
    ax = plot_report(rep)
    assert len(ax.patches) == 5 * 2 and ax.get_title().startswith("curation:")


def test_repeated_native_ids_get_unique_record_ids(tmp_path):
    rows = [{"uuid": "same", "messages": [{"role": "user", "content": f"Question {w} about volcanoes and their eruptions"}]}
            for w in ("one", "two", "three")]
    src = tmp_path / "ids.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rep = curate([src], tmp_path / "out", config=DataSection(split={"validation_fraction": 0.0}))
    ids = [r["id"] for r in _jsonl(tmp_path / "out" / "records" / "train.jsonl")]
    assert ids == ["ids:same", "ids:same#line2", "ids:same#line3"] and rep.kept == 3
