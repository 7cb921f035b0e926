"""The final table: per-domain validation scores after every stage, their average, and the chosen teachers.

``report_data(run)`` is the one source of the numbers (``recipe report --json`` prints it; the report notebook and
the heatmap should call it too)::

    {"stages":   {stage: {domain: {"score", "ci_low", "ci_high", "n"}}},          report split, 95% CI, n = prompts
     "deltas":   {stage: {"input": input stage, domain: {"score", "ci_low", "ci_high", "n"}}},   paired bootstrap
     "teachers": teachers.json (best_so_far, and mopd: routing, picks, every candidate with CIs),
     "regressions": [{"stage", "input", "domain", "score", "ci_low", "ci_high", "n"}, ...],  recipe.reporting.regressions
     "claims":   [{"target", "claim", "measure", "score", "ci_low", "ci_high", "n", "holds"}, ...]}

``claims`` are README's claims about what each stage shows, evaluated on this one run by the code that pools them
over seeds for README's table (``recipe.reporting.evidence``): ``recipe run`` ends by printing them.

A delta compares a stage's checkpoint with its input checkpoint (``<stage>.init_from``) on the same prompts and
the same sampling seeds, resampling prompts jointly (``recipe.stats.paired_bootstrap_delta``).
"""
from __future__ import annotations

import functools
from pathlib import Path

from rich.console import Console
from rich.table import Table

from recipe.console_tables import print_table
from recipe.reporting.evidence import stage_input_of
from recipe.runs.layout import RunDir, file_stamp, read_json
from recipe.stats import item_means, paired_bootstrap_delta
from recipe.validation.samples import read_samples, samples_path


def score_table(run: RunDir) -> tuple[list[str], list[tuple[str, dict[str, float]]]]:
    matrix = read_json(run.scores_path, {"checkpoints": {}, "domains": []}) or {"checkpoints": {}}
    domains = matrix.get("domains", [])
    return domains, list(matrix["checkpoints"].items())


def report_rows(run: RunDir) -> list[dict]:
    domains, rows = score_table(run)
    out = []
    for stage, sc in rows:
        vals = [sc[d] for d in domains if d in sc]
        out.append({"stage": stage, **{d: sc.get(d) for d in domains},
                    "average": round(sum(vals) / len(vals), 2) if vals else None})
    return out


def stage_deltas(run: RunDir, stage: str, n_boot: int = 2000) -> dict | None:
    """Per-domain paired bootstrap delta (points) of a stage over its input checkpoint, report split."""
    before = stage_input_of(run, stage)
    if before is None:
        return None
    try:
        files = [(str(p), *file_stamp(p)) for p in (samples_path(run, stage), samples_path(run, before))]
    except FileNotFoundError:
        return None
    return {"input": before, **{d: dict(e) for d, e in _paired_deltas(*files, n_boot).items()}}  # copies: cached


@functools.lru_cache(maxsize=64)
def _paired_deltas(after: tuple, before: tuple, n_boot: int) -> dict:
    """The deltas of two samples files, each named by (path, inode, size, mtime_ns): the report notebook's tables and
    `recipe run`'s closing report ask for the same ones in one kernel, and each costs 2,000 resamples per domain."""
    a, b = read_samples(Path(after[0])), read_samples(Path(before[0]))
    out: dict = {}
    for d in dict.fromkeys(r["domain"] for r in a):
        ma = item_means(r for r in a if r["domain"] == d)
        mb = item_means(r for r in b if r["domain"] == d)
        if set(ma) & set(mb):
            out[d] = paired_bootstrap_delta(ma, mb, n_boot=n_boot, scale=100.0).as_dict()
    return out


def teacher_marks(run: RunDir) -> dict[str, str]:
    """{domain: stage of its MOPD teacher} (the picks once MOPD ran, else the best checkpoint so far)."""
    from recipe.runs.teachers import read_teachers
    t = read_teachers(run)
    if "mopd" in t:
        return {d: e["stage"] for d, e in t["mopd"]["teachers"].items()}
    return {d: e["stage"] for d, e in t.get("best_so_far", {}).items()}


def teacher_basis(run: RunDir) -> str:
    """How the marked teachers were chosen, in words (what the heatmap's caption says)."""
    from recipe.runs.teachers import read_teachers
    t = read_teachers(run)
    if "mopd" not in t:
        return "the best report-split score so far (MOPD has not run)"
    slots = {e["slot"] for e in t["mopd"]["teachers"].values()}
    if any(s.startswith("select:") for s in slots):
        return ("its routing slot; a select slot's pick has the best selection-split average over the slot's "
                "domains, so a marked cell need not be its column's best")
    return "its routing slot (mopd.teacher_routing)"


def teacher_rows(run: RunDir) -> list[dict]:
    """Flat rows for a teachers table: MOPD's pick per domain (slot, stage, candidate) once MOPD ran, then every
    candidate of each select group with its selection-split average and CI; before MOPD, the best so far."""
    from recipe.runs.teachers import read_teachers
    t = read_teachers(run)
    if "mopd" not in t:
        return [{"domain": d, "teacher": e["stage"], "score": e["score"], "basis": "best report-split checkpoint so far"}
                for d, e in t.get("best_so_far", {}).items()]
    rows = [{"domain": d, "slot": e["slot"], "teacher": e.get("candidate", f"{e['stage']}@final"),
             "score": e.get("score")} for d, e in t["mopd"]["teachers"].items()]
    for slot, g in t["mopd"].get("groups", {}).items():
        rows += [{"domain": "+".join(g["domains"]), "slot": slot, "teacher": c["name"], "score": c["average"]["score"],
                  "ci_low": c["average"]["ci_low"], "ci_high": c["average"]["ci_high"], "n": c["average"]["n"],
                  "picked": c["name"] == g["pick"], "basis": "selection-split average over the group"}
                 for c in g["candidates"]]
    return rows


def report_data(run: RunDir, claims: bool = True) -> dict:
    from recipe.reporting.evidence import evidence_rows
    from recipe.runs.teachers import read_teachers
    stages, deltas = {}, {}
    for stage in run.done_stages():
        v = read_json(run.validation_path(stage)) or {}
        if "ci" in v:
            stages[stage] = v["ci"]
        elif "scores" in v:  # a run from before intervals were recorded: scores only
            stages[stage] = {d: {"score": x, "ci_low": None, "ci_high": None, "n": None} for d, x in v["scores"].items()}
        dl = stage_deltas(run, stage)
        if dl is not None:
            deltas[stage] = dl
    out = {"stages": stages, "deltas": deltas, "teachers": read_teachers(run), "regressions": _regressions(run, deltas)}
    if claims:
        out["claims"] = evidence_rows([run])
    return out


def _regressions(run: RunDir, deltas: dict) -> list[dict]:
    """``recipe.reporting.regressions``' flags of this run (the stages' trained domains from its config.yaml)."""
    from recipe.config import load_config
    from recipe.reporting.regressions import regression_flags, trained_domains
    if not deltas or not run.config_path.exists():
        return []
    cfg = load_config(run.config_path)
    return regression_flags(deltas, {s: trained_domains(cfg, s) for s in deltas})


def print_report(run: RunDir, not_run: list[str] | None = None, console: Console | None = None,
                 data: dict | None = None) -> None:
    """The run's table, per-stage deltas, and last README's claims on this run; ``data`` as ``report_data(run)``
    when already computed (the bootstrap draws with torch: `recipe run` computes it in its kernel)."""
    console = console or Console()
    domains, rows = score_table(run)
    teachers = {d: {"stage": s} for d, s in teacher_marks(run).items()}
    table = Table(title=f"Run {run.run_id}: validation score per domain after each stage (%)")
    table.add_column("stage")
    for d in domains:
        table.add_column(d, justify="right")
    table.add_column("average", justify="right", style="bold")
    for r in report_rows(run):
        cells = []
        for d in domains:
            v = r.get(d)
            mark = "*" if teachers.get(d, {}).get("stage") == r["stage"] else ""
            cells.append("-" if v is None else f"{v:.1f}{mark}")
        table.add_row(r["stage"], *cells, "-" if r["average"] is None else f"{r['average']:.1f}")
    print_table(table, console)
    if data is None:
        data = report_data(run)
    for stage, dl in data["deltas"].items():
        console.print(f"{stage} vs {dl['input']} (paired bootstrap 95% CI, points): " + ", ".join(
            f"{d} {e['score']:+.1f} [{e['ci_low']:+.1f}, {e['ci_high']:+.1f}]" for d, e in dl.items() if d != "input"))
    print_regressions(data.get("regressions"), console)
    if teachers:
        console.print("* = MOPD teacher of that domain (teachers.json): " +
                      ", ".join(f"{d} <- {t['stage']}" for d, t in teachers.items()))
    if not_run:
        console.print(f"not run in this invocation: {', '.join(not_run)}")
    print_claims(run, data.get("claims") or [], console)


def print_claims(run: RunDir, claims: list[dict], console: Console) -> None:
    """README's claims on this run (one seed), each with its 95% CI and n, and which hold on this seed."""
    from recipe.reporting.evidence import claim_line
    if not claims:
        return
    seed = read_json(run.run_json_path, {}).get("seed")
    console.print(f"README's claims on this run ({'seed ' + str(seed) if seed is not None else run.run_id}; report "
                  "split, 95% CI; README pools six seeds):", soft_wrap=True)
    for row in claims:
        console.print(f"  {claim_line(row)}", soft_wrap=True, highlight=False)
    by_target: dict[str, list] = {}
    for r in claims:  # a target with a row per domain (the teacher match) holds when every row does
        by_target.setdefault(r["target"], []).append(r.get("holds"))
    held = [t for t, h in by_target.items() if all(x is True for x in h)]
    not_held = [t for t, h in by_target.items() if any(x is False for x in h)]
    console.print(f"On this seed: hold {', '.join(held) or 'none'}; not shown {', '.join(not_held) or 'none'}.",
                  soft_wrap=True, highlight=False)


def print_regressions(flags: list[dict] | None, console: Console) -> None:
    """The regression flags (``recipe.reporting.regressions``), or that there is none."""
    from recipe.reporting.regressions import flag_line
    if flags is None:
        return
    if not flags:
        console.print("Regressions: no stage lowers a domain it does not train beyond its paired 95% interval.",
                      soft_wrap=True, highlight=False)
        return
    console.print(f"Regressions ({len(flags)}): a stage lowering a domain it does not train, paired 95% interval "
                  "wholly below 0:", soft_wrap=True, highlight=False)
    for f in flags:
        console.print(f"  ! {flag_line(f)}", soft_wrap=True, highlight=False)
