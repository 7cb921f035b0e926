"""``load_splits`` parses each data file once per process (the shared kernel of ``recipe run`` used to re-parse
every split at every stage) and re-reads a file that changed."""
from __future__ import annotations

import json

from recipe.config import load_config
from recipe.domains import data_phase
from recipe.domains.data_phase import load_splits, prepare_data
from recipe.runs import RunDir
from recipe.runs.layout import write_text_atomic

SMALL = ["domains.tiny.train_items=30", "domains.tiny.val_items=5", "domains.tiny.selection_items=4"]


def _parse_fresh(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_cached_records_equal_the_files_and_follow_a_rewrite(tmp_path):
    cfg = load_config("tiny", SMALL)
    run = RunDir(tmp_path / "run")
    files = prepare_data(run, cfg)
    first = load_splits(run, cfg)
    for name, path in files.items():
        d, s = name.rsplit("_", 1)
        assert first[d][s] == _parse_fresh(path), name
    again = load_splits(run, cfg)
    assert again == first
    assert again["math"]["val"] is not first["math"]["val"]          # new lists: appending to one leaves the other
    assert again["math"]["val"][0] is first["math"]["val"][0]        # the records themselves are parsed once

    # a file rewritten in place of the old one (atomic rename, as the data phase writes) is parsed again
    path = files["math_val"]
    rec = dict(first["math"]["val"][0], id="rewritten-0")
    write_text_atomic(path, json.dumps(rec, sort_keys=True) + "\n")
    assert load_splits(run, cfg, ("val",))["math"]["val"] == [rec]
    # so is one appended to (same inode, another size)
    with open(path, "a") as f:
        f.write(json.dumps(dict(rec, id="appended-1"), sort_keys=True) + "\n")
    assert [r["id"] for r in load_splits(run, cfg, ("val",))["math"]["val"]] == ["rewritten-0", "appended-1"]


def test_the_cache_keeps_one_data_directory(tmp_path):
    cfg = load_config("tiny", SMALL)
    runs = [RunDir(tmp_path / f"run{i}") for i in range(2)]
    for run in runs:
        prepare_data(run, cfg)
    load_splits(runs[0], cfg)
    dirs = {p.parent for p in data_phase._RECORDS}
    assert dirs == {runs[0].stage_dir("data").resolve()}
    load_splits(runs[1], cfg, ("val",))
    assert {p.parent for p in data_phase._RECORDS} == {runs[1].stage_dir("data").resolve()}
    assert len(data_phase._RECORDS) == len(cfg.domains.names)   # only the val files of the second run


def test_split_files_keep_the_argument_order_the_model_is_trained_to_write(tmp_path):
    """An SFT target renders a tool call's arguments in their stored order: edit_file must read path, old, new (copy
    the broken line before writing its fix), as the domain builds it, not sorted by name."""
    from recipe.domains import to_sft_messages
    from recipe.model.chat_render import render_chat
    cfg = load_config("tiny", [*SMALL, "domains.tiny.train_items_per_domain={swe_agentic: 40}"])
    run = RunDir(tmp_path / "run")
    prepare_data(run, cfg)
    recs = load_splits(run, cfg, ("train",))["swe_agentic"]["train"]
    edits = [r for r in recs if r["metadata"]["reference"]["tool_calls"][0]["function"]["name"] == "edit_file"]
    assert edits, "no edit_file step among 40 training records"
    for r in edits:
        args = r["metadata"]["reference"]["tool_calls"][0]["function"]["arguments"]
        assert list(args) == ["path", "old", "new"]
        msgs = to_sft_messages(r, thinking=False)
        text = render_chat(msgs, r["tools"], enable_thinking=False)
        turn = text[text.rindex("<tool_call>"):]
        assert turn.index("<parameter=path>") < turn.index("<parameter=old>") < turn.index("<parameter=new>"), turn
