"""benchmarks/small_h200_json.py assembles OUT/small_h200.json of benchmarks/small_on_one_gpu.sh from what the script
leaves in OUT (a fixture folder here, in the files' real shapes): every field of the issue's shape, the comparison
rows mapped whatever fields they carry, and empty sections (not a crash) for a run cut short."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def assembly():
    return _module("small_h200_json")


def _side(score, lo, hi, n):
    return {"score": score, "ci95": [lo, hi], "n": n}


def _comparison(start_mode: str, before: float) -> dict:
    """compare-to-start's table as recipe.pipeline.before_after writes it (one row a suite)."""
    return {"start": "runs/models/smollm2", "stage": "swe_rl", "start_mode": start_mode, "stage_mode": "thinking",
            "complete": True, "rows": [
                {"suite": "ifeval", "before": _side(before, before - 3, before + 3, 541),
                 "after": _side(33.0, 30.1, 36.0, 541), "delta": {"score": 33.0 - before, "ci95": [1.0, 9.0],
                                                                   "n": 541}, "shown": True},
                {"suite": "tiny_math", "before": _side(10.0, 2.0, 20.0, 64), "after": _side(12.0, 4.0, 22.0, 64),
                 "delta": {"score": 2.0, "ci95": [-5.0, 9.0], "n": 64}, "shown": False},
                {"suite": "aime25", "unavailable": "no benchmark mirror"}]}


def _fill(out: Path) -> None:
    (out / "decode.json").write_text(json.dumps({"rows": 256, "ms_per_step": 6.1, "floor_ms_per_step": 0.09,
                                                 "tokens_per_s": 40000.0, "path": "graph", "device": "cuda"}))
    (out / "stage_costs.json").write_text(json.dumps([
        {"stage": "sft", "device": "NVIDIA H200", "dtype": "float32 weights, bfloat16 autocast", "steps": 300,
         "stage_s": 38.2, "train_s": 30.0, "s_per_step": 0.1, "tokens": 176291, "tokens_per_s": 5876.4,
         "peak_memory_mb": 9170.0, "peak_memory_kind": "cuda max_memory_allocated, stage"},
        {"stage": "if_rl", "device": "NVIDIA H200", "dtype": "x", "steps": 30, "stage_s": 60.0, "train_s": 50.0,
         "s_per_step": 1.7, "tokens": 500000, "tokens_per_s": 10000.0, "peak_memory_mb": 12000.0}]))
    (out / "comparison.json").write_text(json.dumps(_comparison("thinking", 20.0)))
    (out / "comparison_start_instruct.json").write_text(json.dumps(_comparison("instruct", 26.2)))


def test_every_field_of_the_shape(tmp_path, assembly):
    _fill(tmp_path)
    data = assembly.assemble(tmp_path, 431.0)
    assert {"device", "torch", "cuda", "commit", "wall_s", "decode", "stages", "before_after"} <= set(data)
    on_gpu = torch.cuda.is_available()
    assert data["device"] == (torch.cuda.get_device_name(0) if on_gpu else "cpu")
    assert (data["cuda"] is None) != on_gpu and data["wall_s"] == 431.0
    assert data["commit"] is None or len(data["commit"]) == 40
    assert data["decode"]["rows"] == 256 and data["decode"]["ms_per_step"] == 6.1
    assert data["decode"]["floor_ms_per_step"] == 0.09
    assert data["stages"]["sft"] == {"seconds": 38.2, "steps": 300, "tokens": 176291, "tokens_per_s": 5876.4,
                                     "peak_mb": 9170.0, "train_s": 30.0}
    assert set(data["stages"]) == {"sft", "if_rl"}
    rows = {(r["suite"], r["model"]): r for r in data["before_after"]}
    assert set(rows) == {(s, m) for s in ("ifeval", "tiny_math")
                         for m in ("start_instruct", "start_thinking", "checkpoint")}   # aime25: unavailable
    si = rows[("ifeval", "start_instruct")]
    assert si == {"suite": "ifeval", "metric": "score", "model": "start_instruct", "stage": None, "score": 26.2,
                  "ci": [23.2, 29.2], "n": 541}
    assert rows[("ifeval", "start_thinking")]["score"] == 20.0
    ck = rows[("ifeval", "checkpoint")]
    assert ck["stage"] == "swe_rl" and ck["score"] == 33.0 and ck["n"] == 541
    assert ck["delta"] == pytest.approx(33.0 - 26.2) and ck["delta_ci"] == [1.0, 9.0]   # against start_instruct
    assert ck["delta_against"] == "start_instruct"
    json.dumps(data)


def test_per_metric_rows_and_a_row_stage_are_mapped(tmp_path, assembly):
    metrics = {m: {"before": _side(v, v - 2, v + 2, 541), "after": _side(v + 5, v + 3, v + 7, 541),
                   "delta": {"score": 5.0, "ci95": [2.0, 8.0], "n": 541}}
               for m, v in (("prompt_strict", 24.0), ("inst_strict", 35.0), ("card", 29.5))}
    table = {"stage": "swe_rl", "rows": [{"suite": "ifbench", "metrics": metrics, "stage": "if_rl"},
                                         {"suite": "ifeval", "metric": "card", **metrics["card"]}]}
    (tmp_path / "comparison_start_instruct.json").write_text(json.dumps(table))
    rows = assembly.assemble(tmp_path, None)["before_after"]
    ifbench = [r for r in rows if r["suite"] == "ifbench"]
    assert {(r["metric"], r["model"]) for r in ifbench} == {(m, k) for m in metrics
                                                           for k in ("start_instruct", "checkpoint")}
    assert all(r["stage"] == "if_rl" for r in ifbench if r["model"] == "checkpoint")
    card = [r for r in rows if r["suite"] == "ifeval" and r["model"] == "checkpoint"]
    assert card[0]["metric"] == "card" and card[0]["score"] == 34.5 and card[0]["stage"] == "swe_rl"


def test_compare_to_start_rows_are_taken_as_they_are(tmp_path, assembly):
    _fill(tmp_path)     # the per-mode tables are there too: rows.json, already in the shape, wins over them
    row = {"suite": "ifbench", "metric": "inst_loose", "model": "checkpoint", "stage": "if_rl", "score": 30.0,
           "ci": [27.0, 33.0], "n": 300, "delta": 4.0, "delta_ci": [1.0, 7.0], "decoding": "greedy"}
    (tmp_path / "rows.json").write_text(json.dumps({"start": "m", "rows": [row], "complete": True}))
    assert assembly.assemble(tmp_path, None)["before_after"] == [row]


def test_a_run_cut_short_gives_empty_sections(tmp_path, assembly):
    (tmp_path / "stage_costs.json").write_text("not json")
    data = assembly.assemble(tmp_path, 12.0)
    assert data["decode"] == {"rows": None, "ms_per_step": None, "floor_ms_per_step": None}
    assert data["stages"] == {} and data["before_after"] == []
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "small_h200_json.py"), str(tmp_path), "--wall-s", "3"],
                   check=True, capture_output=True, cwd=ROOT)
    assert json.loads((tmp_path / "small_h200.json").read_text())["wall_s"] == 3.0
