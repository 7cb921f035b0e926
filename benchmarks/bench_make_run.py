"""Time the tiny cascade as `make run` runs it (after install): every phase through its papermill notebook, in a
fresh run directory, then print seconds per phase and in total. Target: whole cascade <= 300 s on 2 cores.

    .venv/bin/python benchmarks/bench_make_run.py [--seed 0] [--in-process] [-s key=value ...]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--in-process", action="store_true", help="skip the notebooks (measures their overhead)")
    ap.add_argument("-s", "--set", dest="sets", action="append", default=[])
    a = ap.parse_args()
    runs = Path(tempfile.mkdtemp(prefix="bench-run-"))
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs)}
    cmd = [sys.executable, "-m", "recipe.cli", "run", "--run-id", "bench", "-s", f"run.seed={a.seed}"]
    cmd += [x for s in a.sets for x in ("-s", s)] + (["--no-notebooks"] if a.in_process else [])
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True)
    wall = time.perf_counter() - t0
    timings = json.loads((runs / "bench" / "timings.json").read_text())
    print(f"\ntiny cascade ({'in-process' if a.in_process else 'notebooks via papermill'}), seed {a.seed}")
    print(f"{'phase':<18} {'seconds':>8}")
    for phase, sec in timings["phases"].items():
        print(f"{phase:<18} {sec:>8.1f}")
    print(f"{'sum of phases':<18} {timings['total_s']:>8.1f}")
    print(f"{'wall (process)':<18} {wall:>8.1f}   target <= 300")
    print(f"run directory: {runs / 'bench'}")


if __name__ == "__main__":
    main()
