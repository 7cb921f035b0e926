"""OUT/small_h200.json for ``benchmarks/small_on_one_gpu.sh``: the one-GPU run's figures in a shape anyone can read
without our code.

    python benchmarks/small_h200_json.py OUT --wall-s SECONDS [--name small_cpu.json --threads N --seed S --run-id ID]

Reads what the script left in OUT: ``decode.json`` (``bench_decode.py --json``), ``stage_costs.json`` (``recipe
report --costs --json``) and the compare-to-start tables ``comparison*.json``; adds the device, torch and CUDA
versions and the commit. A missing or partial input leaves its section empty (a run cut short still reports what it
finished). The comparison rows are read defensively, since their fields grow: a row may carry its own ``metric``
(IFEval's ``prompt_strict``, ``inst_strict``, ``prompt_loose``, ``inst_loose``, ``card``), per-metric entries under
``metrics``, or a ``stage`` of its own; whatever exists is mapped to one ``before_after`` row per (suite, metric,
model): ``start_instruct`` (``comparison_start_instruct.json``'s start), ``start_thinking``
(``comparison.json``'s start) or ``checkpoint`` with its stage; a checkpoint's ``delta`` is paired against
``start_instruct`` where that table exists (``delta_against`` names the reference either way).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import torch

START_FILES = {"start_instruct": "comparison_start_instruct.json", "start_thinking": "comparison.json"}


def _read(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def environment() -> dict:
    cuda = torch.cuda.is_available()
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        commit = None
    # a copy of the tree without its .git (a GPU machine that was sent the files): the commit its sender named
    commit = commit or os.environ.get("RECIPE_COMMIT") or None
    return {"device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__,
            "cuda": torch.version.cuda if cuda else None, "commit": commit}


def decode_section(d: dict | None) -> dict:
    d = d or {}
    return {"rows": d.get("rows"), "ms_per_step": d.get("ms_per_step"), "floor_ms_per_step": d.get("floor_ms_per_step"),
            **{k: d[k] for k in ("tokens_per_s", "path", "bandwidth_gb_s") if k in d}}


def stages_section(rows: list | None) -> dict:
    out = {}
    for r in rows or []:
        if not isinstance(r, dict) or "stage" not in r:
            continue
        out[r["stage"]] = {"seconds": r.get("stage_s"), "steps": r.get("steps"), "tokens": r.get("tokens"),
                           "tokens_per_s": r.get("tokens_per_s"), "peak_mb": r.get("peak_memory_mb"),
                           "train_s": r.get("train_s")}
    return out


def _ci(r: dict):
    ci = r.get("ci", r.get("ci95"))
    if isinstance(ci, dict):
        ci = [ci.get("low", ci.get("ci_low")), ci.get("high", ci.get("ci_high"))]
    return list(ci) if isinstance(ci, (list, tuple)) else None


def _metric_entries(row: dict):
    """(metric, {before, after, delta}) of one comparison row: its per-metric entries, or the row itself."""
    metrics = row.get("metrics")
    if isinstance(metrics, dict) and metrics:
        for name, entry in metrics.items():
            if isinstance(entry, dict):
                yield name, entry
    elif isinstance(metrics, list) and metrics:
        for entry in metrics:
            if isinstance(entry, dict):
                yield entry.get("metric", "score"), entry
    else:
        yield row.get("metric", "score"), row


def _cell(suite: str, metric: str, model: str, stage, r: dict) -> dict:
    return {"suite": suite, "metric": metric, "model": model, "stage": stage, "score": r.get("score"),
            "ci": _ci(r), "n": r.get("n")}


def before_after_rows(tables: dict[str, dict | None]) -> list[dict]:
    """``tables``: {start model label: its comparison JSON (or None)}."""
    rows: list[dict] = []
    ref = "start_instruct" if tables.get("start_instruct") else "start_thinking"
    for label, table in tables.items():
        if not isinstance(table, dict):
            continue
        for row in table.get("rows") or []:
            if not isinstance(row, dict) or "suite" not in row or "unavailable" in row:
                continue
            stage = row.get("stage", table.get("stage"))
            for metric, entry in _metric_entries(row):
                if isinstance(entry.get("before"), dict):
                    rows.append(_cell(row["suite"], metric, label, None, entry["before"]))
                if label == ref and isinstance(entry.get("after"), dict):
                    cell = _cell(row["suite"], metric, "checkpoint", stage, entry["after"])
                    delta = entry.get("delta") if isinstance(entry.get("delta"), dict) else {}
                    cell.update(delta=delta.get("score"), delta_ci=_ci(delta), delta_n=delta.get("n"),
                                delta_against=label)
                    rows.append(cell)
    return rows


def assemble(out: Path, wall_s: float | None, extra: dict | None = None) -> dict:
    return {**environment(), **(extra or {}), "wall_s": wall_s, "decode": decode_section(_read(out / "decode.json")),
            "stages": stages_section(_read(out / "stage_costs.json")),
            "before_after": _rows(out)}


def _rows(out: Path) -> list[dict]:
    """``compare-to-start --rows``'s rows.json (already one row per suite x metric x model), else the rows read from
    the per-mode comparison tables."""
    rows = _read(out / "rows.json")
    if isinstance(rows, dict) and rows.get("rows"):
        return rows["rows"]
    return before_after_rows({k: _read(out / f) for k, f in START_FILES.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--wall-s", type=float, default=None)
    ap.add_argument("--name", default="small_h200.json", help="the file written in OUT (small_cpu.json: the CPU run)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads the run used (recorded)")
    ap.add_argument("--seed", type=int, default=None, help="the run's seed (recorded)")
    ap.add_argument("--run-id", default=None, help="the run's id (recorded)")
    a = ap.parse_args()
    extra = {k: v for k, v in (("threads", a.threads), ("seed", a.seed), ("run_id", a.run_id)) if v is not None}
    data = assemble(a.out, a.wall_s, extra)
    (a.out / a.name).write_text(json.dumps(data, indent=1) + "\n")
    print(f"{a.out / a.name}: {data['device']}, {len(data['stages'])} stages, "
          f"{len(data['before_after'])} before/after rows, decode {data['decode'].get('ms_per_step')} ms a step")


if __name__ == "__main__":
    main()
