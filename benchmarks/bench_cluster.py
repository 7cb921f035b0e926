"""Speed of the cluster backend's CPU-side work: render the whole paper cascade (9 NeMo-RL jobs, code snapshot
per stage), validate it against a NeMo-RL release tree, and read status back. Prints a table.

Run: ``.venv/bin/python benchmarks/bench_cluster.py [--release-dir ../shared/fixtures/nemo_rl_configs/v0.7.0]``
(validation is skipped when no release tree is found). Target: the whole cascade renders + validates in < 30 s
on 2 CPU cores, so `recipe cluster render --check` stays interactive.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from recipe.cluster.release import ReleaseTree
from recipe.cluster.render import render_cascade
from recipe.cluster.status import collect
from recipe.cluster.config_checks import check_render
from recipe.config import STAGE_PLAN, load_config
from recipe.runs.layout import RunDir
from recipe.runs.teachers import record_scores


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release-dir", default=str(Path(__file__).resolve().parents[2] / "shared/fixtures/nemo_rl_configs/v0.7.0"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        run = RunDir(Path(d) / "bench")
        run.path.mkdir(parents=True)
        cfg = load_config("paper", overrides=["swe_rl.agentic.steps=100", "mopd.is_seq_mask_threshold=2.0",
                                              "cluster.branches.rlhf_from_sft=/ckpt/rlhf"])
        t0 = time.perf_counter()
        results = render_cascade(cfg, run, stages=list(STAGE_PLAN[:3]), allow_unpinned=True, allow_dirty=True)
        for s, scores in {"sft": {"math": 0.9}, "if_rl": {"instruction_following": 0.8},
                          "multi_domain_rl": {d: 0.7 for d in ("instruction_following", "mcqa", "workplace_tools",
                                                                "structured_output")}}.items():
            run.write_manifest(s, {**run.read_manifest(s), "status": "done"})
            record_scores(run, s, scores)
        results += render_cascade(cfg, run, stages=list(STAGE_PLAN[3:]), allow_unpinned=True, allow_dirty=True)
        rows.append(("render cascade (8 stages, 9 jobs)", time.perf_counter() - t0))
        tree = ReleaseTree.find(a.release_dir) if Path(a.release_dir).exists() else None
        if tree:
            t0 = time.perf_counter()
            problems = [p for r in results for p in check_render(r.jobs, tree)]
            rows.append((f"validate vs release ({len(problems)} problems)", time.perf_counter() - t0))
        t0 = time.perf_counter()
        for st in STAGE_PLAN:
            collect(run, st)
        rows.append(("status of 8 stages (no outputs yet)", time.perf_counter() - t0))
    print(f"{'step':<45}{'seconds':>10}")
    for name, sec in rows:
        print(f"{name:<45}{sec:>10.2f}")


if __name__ == "__main__":
    main()
