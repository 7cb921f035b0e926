"""Decontamination reads every benchmark the way the evaluation reads it (recipe.eval.decontam_items): each
benchmark in its own field names yields its items, a file that yields none is an error naming it, the paper
profile covers every benchmark it evaluates, a curation with planted copies removes them and its card counts
them per benchmark. Every row here is written for the test (random words), none is copied from a benchmark."""
from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from recipe.config import load_config
from recipe.config.data_section import DataSection
from recipe.data.curate import curate
from recipe.data.eval_set import eval_items_from_file
from recipe.eval.benchmarks.livecodebench import lcb_messages
from recipe.eval.decontam_items import (TABLE_BENCHMARKS, benchmark_names, configured_benchmarks,
                                        contaminated_prompts, eval_set, file_items)

VOCAB = ("amber basil cedar delta ember fjord glade harbor island jasper kettle lantern meadow nectar orchid pebble "
         "quarry river saddle timber umber valley willow yonder zephyr anchor bramble canyon dune estuary falcon "
         "granite heron indigo juniper kelp lagoon marble nutmeg oyster prairie quill reef sorrel thistle").split()


def text(seed: int, n: int = 24) -> str:
    """A sentence of ``n`` random words; two seeds share no 13-word run (in practice)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) for _ in range(n)).capitalize() + "."


def rows_of(bench: str, seeds: list[int]) -> list[dict]:
    """Rows of ``bench`` in its own layout (fields as the suite or the benchmark's file names them)."""
    make = {
        "aime25": lambda i, t: {"id": f"a-{i}", "problem": t, "expected_answer": "7"},
        "hmmt_feb25": lambda i, t: {"problem_idx": i, "problem": t, "answer": "7"},
        "ifeval": lambda i, t: {"key": i, "prompt": t, "instruction_id_list": [], "kwargs": []},
        "ifbench": lambda i, t: {"key": i, "prompt": t, "instruction_id_list": [], "kwargs": []},
        "livecodebench": lambda i, t: {"question_id": f"q{i}", "question_content": t, "starter_code": "",
                                       "public_test_cases": "[]", "private_test_cases": "[]"},
        "arena_hard_v2": lambda i, t: {"uid": f"u{i}", "category": "hard_prompt", "prompt": t},
        "swebench_verified": lambda i, t: {"instance_id": f"o__r-{i}", "repo": "o/r", "base_commit": "abc",
                                           "problem_statement": t},
        "longbench_v2": lambda i, t: {"_id": f"l{i}", "context": t, "question": "Which?", "choice_A": "a",
                                      "choice_B": "b", "choice_C": "c", "choice_D": "d", "answer": "A"},
        "imo_answerbench": lambda i, t: {"Problem ID": f"imo-bench-algebra-{i:03d}", "Problem": t, "Short Answer": "7",
                                         "Category": "Algebra", "Subcategory": "x", "Source": "y"},
        "imo_proofbench": lambda i, t: {"Problem ID": f"PB-Basic-{i:03d}", "Problem": t, "Solution": "s",
                                        "Grading guidelines": "g"},
        "gpqa_diamond": lambda i, t: {"Record ID": f"rec{i}", "Question": t, "Correct Answer": "a",
                                      "Incorrect Answer 1": "b", "Incorrect Answer 2": "c", "Incorrect Answer 3": "d"},
    }[bench]
    return [make(i, text(s)) for i, s in enumerate(seeds)]


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def file_name(bench: str) -> str:
    return f"{bench}.csv" if bench in TABLE_BENCHMARKS else f"{bench}.jsonl"


BENCHES = sorted(n for n in benchmark_names() if not n.startswith("tiny_"))


def test_every_benchmark_has_a_layout_here():
    """A suite registered later without a row layout here fails this test (and is then covered below)."""
    for b in BENCHES:
        assert rows_of(b, [1])


@pytest.mark.parametrize("bench", BENCHES)
def test_a_benchmark_file_in_its_own_field_names_yields_its_items(bench, tmp_path):
    seeds = [100 + k for k in range(3)]
    p = write(tmp_path / file_name(bench), rows_of(bench, seeds))
    for spec in (str(p), f"{bench}={p}"):  # recognised by its fields, and named
        label, items, prov = file_items(spec)
        assert len(items) == 3 and prov["sha256"]
        for (item_id, item_text), s in zip(items, seeds):
            assert text(s) in item_text
        assert all(i.startswith(f"{label}:") for i, _ in items)


@pytest.mark.parametrize("bench", ["livecodebench", "swebench_verified", "gpqa_diamond", "imo_answerbench"])
def test_the_generic_reader_refuses_a_file_it_cannot_read(bench, tmp_path):
    """These field names gave 0 items with no error before: now the file is named in an error."""
    p = write(tmp_path / file_name(bench), rows_of(bench, [1, 2]))
    with pytest.raises(ValueError, match=str(p.name)):
        eval_items_from_file(p)


def test_a_file_with_no_items_is_an_error_naming_it(tmp_path):
    p = write(tmp_path / "odd.jsonl", [{"payload": 1}, {"payload": 2}])
    with pytest.raises(ValueError, match="odd.jsonl: no evaluation item"):
        file_items(p)
    q = write(tmp_path / "lcb.jsonl", [{"question_id": "q1", "title": "no question_content"}])
    with pytest.raises(ValueError, match=r"lcb.jsonl: no evaluation item read as livecodebench"):
        file_items(f"livecodebench={q}")


def test_the_paper_profile_decontaminates_against_every_benchmark_it_evaluates(tmp_path):
    cfg = load_config("paper")
    names = configured_benchmarks(cfg)
    with_rows = {n for n, e in cfg.benchmarks.suites.items() if e.source is not None}
    assert set(names) >= with_rows | {"imo_answerbench", "imo_proofbench", "gpqa_diamond"}
    assert "mmlu_redux" not in names   # a Table 1 row with the paper's value only: nothing to read
    # without the suites' reading, curation refuses rather than decontaminating against nothing
    with pytest.raises(ValueError, match="data.decontam.benchmarks"):
        curate([], tmp_path / "out", config=cfg.data)
    # every benchmark read from a mirror holding each file where its source says
    sets = {"benchmarks.mirror": str(tmp_path / "mirror"), "benchmarks.allow_hub": "false"}
    for b in names:
        where = f"benchmarks.suites.{b}.source" if b in with_rows else f"data.decontam.sources.{b}"
        sets[f"{where}.mirror_file"] = f"m/{file_name(b)}"
        sets[f"{where}.format"] = "csv" if b in TABLE_BENCHMARKS else "jsonl"
        write(tmp_path / "mirror" / "m" / file_name(b), rows_of(b, [7, 8]))
    cfg = load_config("paper", overrides=[f"{k}={v}" for k, v in sets.items()])
    es = eval_set(cfg)
    assert {s["benchmark"]: s["items"] for s in es.sources} == {b: 2 for b in names}
    broken = load_config("paper", overrides=[f"{k}={v}" for k, v in sets.items()
                                             if "gpqa_diamond.mirror_file" not in k])
    with pytest.raises(ValueError, match="gpqa_diamond"):
        eval_set(broken)


def _chat(rid: str, user: str, answer: str = "An answer.") -> dict:
    return {"id": rid, "messages": [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]}


def test_curation_removes_planted_copies_and_the_card_counts_them_per_benchmark(tmp_path):
    planted = ["livecodebench", "swebench_verified", "gpqa_diamond", "imo_answerbench"]
    specs = []
    for k, b in enumerate(planted):
        specs.append(f"{b}={write(tmp_path / 'eval' / file_name(b), rows_of(b, [10 * k + 1, 10 * k + 2]))}")
    lcb_rows = rows_of("livecodebench", [1, 2])
    train = [_chat(f"leak-{b}", f"Please help. {text(10 * k + 2)} Thanks.") for k, b in enumerate(planted)]
    train += [_chat(f"clean-{i}", text(500 + i)) for i in range(5)]
    # the evaluation's LCB prompt around a question of our own: the template alone is not a copy
    template_only = lcb_messages({**lcb_rows[0], "question_content": text(999)}, False)[-1]["content"]
    train.append(_chat("lcb-template", template_only))
    src = write(tmp_path / "train.jsonl", train)
    es = eval_set(load_config("tiny"), specs)
    rep = curate([src], tmp_path / "out", config=DataSection(dedup={"near": False}), eval_set=es)
    dropped = {d["id"]: d.get("matched_eval_item") for d in rep.dropped_rows}
    assert {k.removeprefix("train:") for k in dropped} == {f"leak-{b}" for b in planted}
    assert rep.dropped["contaminated"] == 4 and rep.kept == 6 and rep.reconciles
    by = {b["benchmark"]: b for b in rep.decontamination["benchmarks"]}
    assert {b: (v["items"], v["rows_removed"]) for b, v in by.items()} == {b: (2, 1) for b in planted}
    card = (tmp_path / "out" / "README.md").read_text()
    for b in planted:
        assert any(line.startswith(f"| {b} | {b} |") and line.endswith("| 2 | 0 / 0 | 1 |") for line in card.splitlines())
    assert "decontaminated" in card


def test_contaminated_prompts_checks_generated_prompts_against_named_suites(tmp_path):
    sets = {"benchmarks.mirror": str(tmp_path), "benchmarks.allow_hub": "false",
            "benchmarks.suites.ifeval.source.mirror_file": "ifeval.jsonl",
            "benchmarks.suites.ifbench.source.mirror_file": "ifbench.jsonl",
            "benchmarks.suites.ifbench.source.format": "jsonl"}
    write(tmp_path / "ifeval.jsonl", rows_of("ifeval", [1, 2]))
    write(tmp_path / "ifbench.jsonl", rows_of("ifbench", [3, 4]))
    cfg = load_config("paper", overrides=[f"{k}={v}" for k, v in sets.items()])
    prompts = [text(50), f"Rewrite this: {text(4)}", text(1, 30), "short"]
    got = contaminated_prompts(prompts, ["ifeval", "ifbench"], n=13, cfg=cfg)
    assert got == [None, "ifbench:1", "ifeval:0", None]


def test_genuine_benchmark_files_are_read_and_a_planted_item_removed(shared_dir, tmp_path):
    """The fixtures' real files (../shared/fixtures/eval) through the paper profile's sources and the mirror."""
    counts = {"aime25": 30, "hmmt_feb25": 30, "ifbench": 300, "arena_hard_v2": 750, "swebench_verified": 5,
              "imo_answerbench": 400, "imo_proofbench": 60}
    cfg = load_config("paper", overrides=[f"benchmarks.mirror={shared_dir}", "benchmarks.allow_hub=false",
                                          f"data.decontam.benchmarks={json.dumps(sorted(counts))}"])
    es = eval_set(cfg)
    assert {s["benchmark"]: s["items"] for s in es.sources} == counts
    swe = next(t for b, _, t in es.items if b == "swebench_verified")
    imo = next(t for b, _, t in es.items if b == "imo_answerbench")
    rows = [_chat("swe", f"Fix this issue:\n{swe}"), _chat("imo", f"Prove: {imo}"), _chat("clean", text(77))]
    rep = curate([write(tmp_path / "t.jsonl", rows)], tmp_path / "out", config=DataSection(dedup={"near": False}),
                 eval_set=es)
    removed = {b["benchmark"]: b["rows_removed"] for b in rep.decontamination["benchmarks"]}
    assert removed["swebench_verified"] == 1 and removed["imo_answerbench"] == 1 and rep.kept == 1
