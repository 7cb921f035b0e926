"""The capacity study: the tiny cascade at several model sizes, several seeds each, then every claim pooled per size,
the forgetting index per domain, SFT's own scores and the wall times (``recipe.reporting.capacity``).

    .venv/bin/python benchmarks/bench_capacity.py --sizes w48 w64 w96 --seeds 0 1 2 [--runs-dir runs/capacity] [--jobs 2]
        [--out build/capacity] [-s key=value ...]

Runs are ``recipe run`` processes named cap-<size>-seed<N> under --runs-dir; a finished run is reused (its stages
are skipped), so the study resumes where it stopped. ``--jobs 1`` runs one cascade at a time on every core (the
wall times are then those of ``make run``); ``--jobs 2`` runs two side by side on one thread each (faster in all,
and each wall time is then that of a run sharing the machine: the table says which). One setting for every size and
seed: ``-s`` overrides apply to all runs. Writes ``capacity.json``, ``capacity.md`` and ``capacity.png`` to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def _run(rid: str, overrides: list[str], env: dict, log_dir: Path) -> float:
    cmd = [sys.executable, "-m", "recipe.cli.__main__", "run", "--profile", "tiny", "--run-id", rid]
    for o in overrides:
        cmd += ["-s", o]
    t0 = time.perf_counter()
    with open(log_dir / f"{rid}.log", "w") as log:
        r = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{rid} failed (exit {r.returncode}); see {log_dir / f'{rid}.log'}")
    return wall


def _fmt(e: dict, sign: bool = True) -> str:
    s = "+" if sign else ""
    return f"{e['score']:{s}.1f} [{e['ci_low']:{s}.1f}, {e['ci_high']:{s}.1f}]"


def markdown(study: dict, jobs: int) -> str:
    sizes = list(study)
    head = "| | " + " | ".join(f"{s} ({study[s]['parameters'] / 1e6:.2f}M, {len(study[s]['runs'])} seeds)"
                               for s in sizes) + " |"
    sep = "|---" * (len(sizes) + 1) + "|"
    lines = ["Claims pooled over the seeds (paired difference in points, 95% CI; (e): MOPD's score against each "
             "teacher's interval); **bold** = holds.", "", head, sep]
    keys = []
    for s in sizes:
        for r in study[s]["claims"]:
            k = (r["target"], r.get("measure", r["claim"]).split(", ")[-1] if r["target"] == "e" else "")
            if k not in keys:
                keys.append(k)
    for key in keys:
        cells = []
        for s in sizes:
            r = next((r for r in study[s]["claims"]
                      if (r["target"], r.get("measure", r["claim"]).split(", ")[-1] if r["target"] == "e" else "") == key),
                     None)
            if r is None or "score" not in r:
                cells.append("n/a")
                continue
            txt = f"{_fmt(r, sign='teacher' not in r)} n={r['n']}"
            cells.append(f"**{txt}**" if r["holds"] else txt)
        label = f"({key[0]}) " + (key[1] if key[1] else next(r["claim"] for r in study[sizes[0]]["claims"]
                                                             if r["target"] == key[0]))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Forgetting index (best checkpoint - final, points, 95% CI, pooled) and SFT's own score per domain:",
              "", "| domain | " + " | ".join(f"{s} forgetting | {s} SFT" for s in sizes) + " |",
              "|---" * (2 * len(sizes) + 1) + "|"]
    doms = [r["domain"] for r in study[sizes[0]]["forgetting"]]
    for d in doms:
        cells = []
        for s in sizes:
            f = next(r for r in study[s]["forgetting"] if r["domain"] == d)
            t = next((r for r in study[s]["sft"] if r["domain"] == d), None)
            cells += [_fmt(f), _fmt(t, sign=False) if t else "n/a"]
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    lines += ["", "Final checkpoint - SFT per domain (points, 95% CI, pooled); *below* = the whole interval under 0:",
              "", "| domain | " + " | ".join(sizes) + " |", "|---" * (len(sizes) + 1) + "|"]
    for d in doms:
        cells = []
        for s in sizes:
            r = next(r for r in study[s]["final_vs_sft"] if r["domain"] == d)
            cells.append(_fmt(r) + (" *below*" if r["below_sft"] else ""))
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    how = "one run at a time on 2 cores" if jobs == 1 else f"{jobs} runs side by side on 2 cores, 1 thread each"
    lines += ["", f"Wall time per run ({how}): " + "; ".join(
        f"{s} " + ", ".join(f"{w:.0f} s" for w in study[s]["wall_s"]) for s in sizes if study[s]["wall_s"])]
    return "\n".join(lines) + "\n"


def plot(study: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = list(study)
    params = [study[s]["parameters"] / 1e6 for s in sizes]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    targets = [t for t in "abcdfghi"]
    for i, t in enumerate(targets):
        ys, lo, hi = [], [], []
        for s in sizes:
            r = next((r for r in study[s]["claims"] if r["target"] == t and "score" in r), None)
            ys.append(r["score"] if r else float("nan"))
            lo.append(r["score"] - r["ci_low"] if r else 0)
            hi.append(r["ci_high"] - r["score"] if r else 0)
        xs = [p * (1 + 0.015 * (i - len(targets) / 2)) for p in params]  # small offsets keep the bars apart
        ax1.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"({t})")
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set_ylabel("stage - input, points (95% CI)")
    ax1.set_title("each stage's claim on its own domain")
    ax1.legend(ncol=4, fontsize=8)
    doms = [r["domain"] for r in study[sizes[0]]["forgetting"]]
    for d in doms:
        ys = [next(r for r in study[s]["forgetting"] if r["domain"] == d)["score"] for s in sizes]
        ax2.plot(params, ys, marker="o", label=d)
    for ax in (ax1, ax2):  # one x axis for both panels: each size named at its parameter count
        ax.set_xscale("log")
        ax.set_xticks(params, [f"{s}\n{p:.2f}M" for s, p in zip(sizes, params)], minor=False)
        ax.minorticks_off()
        ax.set_xlabel("model size (parameters, log scale)")
    ax2.set_ylabel("best checkpoint - final, points")
    ax2.set_title("forgetting index per domain (pooled over seeds)")
    ax2.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["w48", "w64", "w96"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--runs-dir", default="runs/capacity", help="where the runs go (default runs/capacity)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="build/capacity")
    ap.add_argument("--no-train", action="store_true", help="only read runs that already exist")
    ap.add_argument("-s", "--set", dest="sets", action="append", default=[])
    a = ap.parse_args()
    from recipe.reporting.capacity import ModelSize, study_rows
    from recipe.runs import RunDir
    runs_dir = Path(a.runs_dir).resolve()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "RECIPE_RUNS_DIR": str(runs_dir)}
    threads = max(1, (os.cpu_count() or 2) // a.jobs)
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    sizes = [ModelSize.parse(s) for s in a.sizes]
    todo = [(sz, seed, f"cap-{sz.name}-seed{seed}") for sz in sizes for seed in a.seeds]
    walls_path = out / "walls.json"
    walls: dict[str, float] = json.loads(walls_path.read_text()) if walls_path.exists() else {}

    def one(job):
        sz, seed, rid = job
        if a.no_train or RunDir(runs_dir / rid).is_done("swe_rl"):
            return rid, walls.get(rid)
        print(f"start {rid}", flush=True)
        w = _run(rid, [*sz.overrides(), *a.sets, f"run.seed={seed}", f"run.torch_threads={threads}"], env, out)
        print(f"done  {rid} in {w:.0f} s", flush=True)
        return rid, w

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for rid, w in pool.map(one, todo):
            if w is not None:
                walls[rid] = round(w, 1)
                walls_path.write_text(json.dumps(walls, indent=1) + "\n")
    os.environ["RECIPE_RUNS_DIR"] = str(runs_dir)
    by_size = {}
    for sz in sizes:  # with --no-train, a run that has not finished is left out, and the table says so
        done = [RunDir(runs_dir / f"cap-{sz.name}-seed{s}") for s in a.seeds]
        done = [r for r in done if r.is_done("swe_rl")]
        if len(done) < len(a.seeds):
            print(f"{sz.name}: {len(done)} of {len(a.seeds)} seeds finished; pooling those", flush=True)
        if done:
            by_size[sz.name] = done
    study = study_rows(by_size, {name: [walls[r.run_id] for r in runs if r.run_id in walls]
                                 for name, runs in by_size.items()})
    (out / "capacity.json").write_text(json.dumps({"seeds": a.seeds, "jobs": a.jobs, "overrides": a.sets,
                                                   "sizes": study}, indent=1, default=str) + "\n")
    md = markdown(study, a.jobs)
    (out / "capacity.md").write_text(md)
    plot(study, out / "capacity.png")
    print(md)
    print(f"written: {out / 'capacity.json'}, {out / 'capacity.md'}, {out / 'capacity.png'}")


if __name__ == "__main__":
    main()
