"""Time the eval phase of `make run` (target <= ~15 s on 2 quiet cores) on an existing run's final checkpoint.

    python benchmarks/bench_eval_phase.py --run-id tiny-seed0 [--stage mopd]

Runs the phase twice into a scratch copy of the eval folder: cold (all samples generated) and warm (all reused from
the sample cache). Run it on a quiet machine; numbers measured under load are not meaningful.
"""
from __future__ import annotations

import argparse
import json
import shutil
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--stage", default="mopd")
    a = ap.parse_args()
    import torch

    from recipe.eval.run_phase import run_eval_phase
    from recipe.runs.run_init import open_run
    torch.set_num_threads(1)
    run, cfg = open_run(a.run_id)
    out = run.path / "eval" / a.stage
    backup = out.with_name(a.stage + ".bench-backup")
    if out.exists():
        shutil.move(out, backup)
    try:
        times = {}
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            run_eval_phase(run, cfg, a.stage)
            times[label] = round(time.perf_counter() - t0, 2)
        print(json.dumps({"run": a.run_id, "stage": a.stage, "eval_phase_s": times, "target_s": 15}))
    finally:
        if backup.exists():
            shutil.rmtree(out, ignore_errors=True)
            shutil.move(backup, out)


if __name__ == "__main__":
    main()
