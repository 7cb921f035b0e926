"""Time the tiny cascade as `make run` runs it (after install): every phase through its papermill notebook, in a
fresh run directory. Prints seconds per phase, the total, the peak RSS, and a profile (top functions by self
time) of the slowest training phase, so the next person sees where the time goes.
Target: every stage of the plan + the eval phase <= 420 s wall on 2 quiet cores (300 s at hidden size 64; the
capacity study's wider model may cost up to 420 s, docs/EVIDENCE.md; longer-term 120 s).

    .venv/bin/python benchmarks/bench_make_run.py [--seed 0] [--in-process] [--no-profile] [-s key=value ...]

Peak RSS is that of the largest process of the run (the CLI or one notebook kernel: getrusage of the children).
The profile re-runs the slowest stage in this process under cProfile (``run_stage(..., force=True)`` on a copy of
the finished run), so it adds about 1.5x that stage's time and does not count in the table.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
TARGET_S, GOAL_S = 420, 120  # seconds: the target and the longer-term goal (docstring)


def profile_stage(runs: Path, run_id: str, stage: str, top: int = 25) -> str:
    """cProfile of one re-run of ``stage`` in this process; returns the top functions by self time."""
    os.environ["RECIPE_RUNS_DIR"] = str(runs)
    from recipe.runs.run_init import open_run
    from recipe.pipeline.stage_runner import run_stage
    run, cfg = open_run(run_id)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    run_stage(run, cfg, stage, progress=False, force=True)
    prof.disable()
    wall = time.perf_counter() - t0
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    return f"profile of {stage} (re-run under cProfile: {wall:.1f} s), top {top} by self time:\n" + \
        "\n".join(lines[start:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--in-process", action="store_true", help="skip the notebooks (measures their overhead)")
    ap.add_argument("--no-profile", action="store_true", help="skip the profile of the slowest phase")
    ap.add_argument("-s", "--set", dest="sets", action="append", default=[])
    a = ap.parse_args()
    runs = Path(tempfile.mkdtemp(prefix="bench-run-"))
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs)}
    overrides = [f"run.seed={a.seed}", *a.sets]
    cmd = [sys.executable, "-m", "recipe.cli", "run", "--run-id", "bench"]
    cmd += [x for s in overrides for x in ("-s", s)] + (["--no-notebooks"] if a.in_process else [])
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True)
    wall = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    timings = json.loads((runs / "bench" / "timings.json").read_text())
    phases = timings["phases"]
    print(f"\ntiny cascade ({'in-process' if a.in_process else 'notebooks via papermill'}), seed {a.seed}")
    print(f"{'phase':<22} {'seconds':>8} {'share':>7}")
    for phase, sec in phases.items():
        print(f"{phase:<22} {sec:>8.1f} {100 * sec / max(wall, 1e-9):>6.1f}%")
    print(f"{'sum of phases':<22} {timings['total_s']:>8.1f}")
    print(f"{'wall (process)':<22} {wall:>8.1f}   target <= {TARGET_S} ({'MET' if wall <= TARGET_S else 'NOT MET'}); "
          f"longer-term goal {GOAL_S} ({wall / GOAL_S:.1f}x of it)")
    print(f"{'start-up + overhead':<22} {wall - timings['total_s']:>8.1f}")
    print(f"peak RSS (largest process): {peak_mib:.0f} MiB")
    sft_rows = [json.loads(x) for x in (runs / "bench" / "01_sft" / "metrics.jsonl").read_text().splitlines() if x]
    if sft_rows:  # SFT's steps are the same arithmetic in every run of a seed: a yardstick of the machine's speed
        sft_s = sum(r.get("time_s", 0.0) for r in sft_rows)
        print(f"machine yardstick: SFT's {len(sft_rows)} steps (bit-identical work in every run of this seed and "
              f"model size) took {sft_s:.1f} s; on a shared VM this drifts by up to 1.5x (docs/SPEED.md), so compare "
              f"runs by it too")
    print(f"run directory: {runs / 'bench'}")
    stages = {p: s for p, s in phases.items() if p not in ("data", "report", "eval") and s > 0}
    if stages and not a.no_profile:
        slowest = max(stages, key=stages.get)
        print()
        print(profile_stage(runs, "bench", slowest))


if __name__ == "__main__":
    main()
