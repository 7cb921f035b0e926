"""Evidence across seeds: run the tiny cascade once per seed (in-process; done stages with unchanged inputs are
skipped), then print every target of ``recipe.reporting.evidence.TARGETS`` pooled over the seeds, with its 95%
interval and n (prompts x seeds), and whether it holds.

    .venv/bin/python benchmarks/bench_evidence.py --seeds 0 1 2 [--runs-dir DIR] [--json] [-s key=value ...]
        [--heatmap docs/report_heatmap.png] [--costs rlhf]

One setting for every seed: overrides apply to all runs; with none, every run has `make run`'s settings (README's
table and figure are drawn so). Runs are named tiny-seed<N> under --runs-dir (default: RECIPE_RUNS_DIR or ./runs),
so `make run` (seed 0) is reused. ``--heatmap PATH`` draws the first run's checkpoint x domain heatmap (the report
notebook's) with a caption naming the run, its seed, torch threads, overrides and commit. After the pooled table it
prints, per seed, (e) per teacher domain and every stage's regression flags (recipe.reporting.regressions).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--runs-dir", default=None)
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    ap.add_argument("--no-train", action="store_true", help="only pool runs that already exist")
    ap.add_argument("--run-ids", nargs="+", default=None, help="pool these existing runs instead (implies --no-train)")
    ap.add_argument("-s", "--set", dest="sets", action="append", default=[])
    ap.add_argument("--heatmap", default=None, help="write the first run's heatmap PNG here (README's figure)")
    ap.add_argument("--costs", nargs="+", default=[], metavar="STAGE",
                    help="also print each STAGE against its input on every domain, pooled (what it costs the rest)")
    a = ap.parse_args()
    if a.runs_dir:
        os.environ["RECIPE_RUNS_DIR"] = str(Path(a.runs_dir).resolve())
    from recipe.reporting.evidence import evidence_rows
    from recipe.pipeline.cascade_runner import run_pipeline
    from recipe.runs import RunDir
    runs, wall = [], {}
    for i, seed in enumerate(a.run_ids or a.seeds):
        rid = a.run_ids[i] if a.run_ids else f"{a.profile}-seed{seed}"
        t0 = time.perf_counter()
        if a.no_train or a.run_ids:
            run = RunDir.for_id(rid)
        else:
            run = run_pipeline(profile=a.profile, run_id=rid, overrides=[*a.sets, f"run.seed={seed}"],
                               via_notebooks=False)
        wall[rid] = round(time.perf_counter() - t0, 1)
        runs.append(run)
    rows = evidence_rows(runs)
    if a.heatmap:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from recipe.reporting import plots
        fig = plots.plot_heatmap(runs[0], caption=True)
        Path(a.heatmap).parent.mkdir(parents=True, exist_ok=True)
        Path(a.heatmap).write_bytes(plots.figure_png(fig))
        plt.close(fig)
        print(f"heatmap of {runs[0].run_id} -> {a.heatmap}")
    if a.json:
        print(json.dumps({"seeds": a.seeds, "wall_s": wall, "rows": rows}, indent=2))
        return
    print(f"\nevidence pooled over {'runs ' + ', '.join(a.run_ids) if a.run_ids else f'seeds {a.seeds}'} "
          f"(report split; 95% CI; n = prompts x seeds; (a)-(d): paired difference in points, (e): student score)")
    print(f"{'':3} {'measure':<62} {'value':>7} {'95% CI':>17} {'n':>5}  holds")
    for r in rows:
        if "score" not in r:
            print(f"({r['target']}) {r['claim']}: not evaluated: {r.get('note')}")
            continue
        extra = f"  teacher {r['teacher']['score']:.1f} [{r['teacher']['ci_low']:.1f}, {r['teacher']['ci_high']:.1f}]" \
            if "teacher" in r else ""
        sign = "+" if "teacher" not in r else ""
        print(f"({r['target']}) {r['measure']:<62} {r['score']:>{sign}7.1f} [{r['ci_low']:>{sign}6.1f}, "
              f"{r['ci_high']:>{sign}6.1f}]"
              f" {r['n']:>5}  {'yes' if r['holds'] else 'NO'}{extra}")
    per_seed(runs)
    if a.costs:
        from recipe.reporting.evidence import stage_domain_deltas
        domains = list(dict.fromkeys(d for run in runs for d in json.loads(run.scores_path.read_text())["domains"]))
    for stage in a.costs:
        print(f"\n{stage} against its input on every domain, pooled (report split, 95% CI, n = prompts x seeds): the "
              f"paired change, and {stage}'s score against the input's interval")
        for r in stage_domain_deltas(runs, stage, domains):
            change = "0 inside" if r["ci_low"] <= 0 <= r["ci_high"] else "above 0" if r["ci_low"] > 0 else "below 0"
            i, f = r["input"], r["after"]
            where = "inside" if i["ci_low"] <= f["score"] <= i["ci_high"] else "above" if f["score"] > i["ci_high"] \
                else "BELOW"
            print(f"  {r['domain']:<22} {r['score']:+6.1f} [{r['ci_low']:+6.1f}, {r['ci_high']:+6.1f}] {change:<8}  "
                  f"{f['score']:5.1f} vs input {i['score']:5.1f} [{i['ci_low']:5.1f}, {i['ci_high']:5.1f}] {where:<6} "
                  f"n={r['n']}")
    print("wall seconds per run (0 when every stage was already done):", wall)


def per_seed(runs) -> None:
    """What pooling hides: on each run alone, (e) per teacher domain (MOPD's score against its teacher's interval)
    and the regression flags of every stage (recipe.reporting.regressions: a domain a stage does not train,
    lowered with its paired interval wholly below 0)."""
    from recipe.reporting.evidence import TARGETS, evidence_rows
    from recipe.reporting.regressions import flag_line
    from recipe.reporting.run_report import report_data
    match = [t for t in TARGETS if t.key == "e"]
    print("\nper seed: (e) MOPD against each teacher on its domain, and every regression flag")
    for run in runs:
        print(f"  {run.run_id}:")
        for r in evidence_rows([run], match):
            if "score" not in r:
                print(f"    (e) not evaluated: {r.get('note')}")
                continue
            t = r["teacher"]
            gap = r["score"] - t["score"]
            print(f"    (e) {r['measure']:<58} {r['score']:5.1f} vs {t['score']:5.1f} [{t['ci_low']:5.1f}, "
                  f"{t['ci_high']:5.1f}] ({gap:+.1f}) n {r['n']}: {'inside or above' if r['holds'] else 'BELOW'}")
        flags = report_data(run, claims=False)["regressions"]
        for f in flags:
            print(f"    ! {flag_line(f)}")
        if not flags:
            print("    no regression flag")


if __name__ == "__main__":
    main()
