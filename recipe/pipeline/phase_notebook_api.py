"""What the notebooks call (they hold no logic): one function per cell-sized step.

Every notebook takes papermill parameters ``run_id``, ``profile``, ``overrides`` (list of ``key=value``) and, for
stage notebooks, ``stage`` and ``backend`` (``local`` trains in-process; ``cluster`` renders/submits/monitors a
NeMo-RL job through ``recipe.cluster.cluster_notebook_api``). Run top to bottom interactively, a notebook creates the run
if it does not exist and runs earlier phases that are missing, so each one also works on its own.
"""
from __future__ import annotations

import pandas as pd

from recipe.domains.data_phase import prepare_data
from recipe.pipeline.params import as_list
from recipe.reporting.run_report import report_rows
from recipe.runs.layout import DATA_PHASE, RunDir
from recipe.runs.run_init import open_or_init_run, open_run

# torch/transformers (stage_runner) and matplotlib (plots) are imported inside the functions that need them, so
# the data and report notebooks start a few seconds faster.


def ensure_run(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None):
    """Open ``run_id`` (or create it from ``profile`` + ``overrides``); returns (RunDir, config). ``overrides`` may
    be the string papermill's ``-p`` passes. Another profile or other overrides than the run's is an error."""
    return open_or_init_run(run_id, profile, as_list(overrides, "overrides"))


def data_phase(run_id: str, profile: str = "tiny", overrides: list[str] | None = None) -> pd.DataFrame:
    """Generate the tiny domains into 00_data/ and return per-domain counts."""
    run, cfg = ensure_run(run_id, profile, overrides)
    files = prepare_data(run, cfg)
    m = run.read_manifest(DATA_PHASE)
    rows = [{"domain": d, "train": m["counts"][f"{d}_train"], "val": m["counts"][f"{d}_val"]}
            for d in cfg.domains.names]
    return pd.DataFrame(rows).set_index("domain"), files


def curate_data(run_id: str, sources: list[str] | None = None, decontaminate_against: list[str] | None = None):
    """Run the curation pipeline (`recipe data curate`) into ``00_data/curated``: on ``sources`` (files or
    downloaded Hub folders, e.g. from `recipe hub download rl-data`) when given, else on the tiny training files
    decontaminated against the tiny validation files. Returns (report, counts table)."""
    from recipe.data.curate import curate
    from recipe.data.curation_report_views import report_table
    from recipe.eval.decontam_items import eval_set
    sources, decontaminate_against = as_list(sources, "sources"), as_list(decontaminate_against, "decontaminate_against")
    run, cfg = open_run(run_id)
    d = run.stage_dir(DATA_PHASE)
    if sources:
        inputs, evals = [str(p) for p in sources], [str(p) for p in (decontaminate_against or [])]
    else:
        inputs = [str(p) for p in sorted(d.glob("*_train.jsonl"))]
        evals = [str(p) for p in sorted(d.glob("*_val.jsonl"))] + [str(p) for p in (decontaminate_against or [])]
    # the benchmarks the profile decontaminates against are read through their evaluation suites, the files as given
    report = curate(inputs, str(d / "curated"), fmt="auto", config=cfg.data, eval_set=eval_set(cfg, extra_files=evals))
    return report, report_table(report)


def stage(run_id: str, stage: str, profile: str = "tiny", overrides: list[str] | None = None,
          progress: bool = True) -> dict:
    """Run one stage in-process (earlier missing phases first); returns its manifest."""
    from recipe.pipeline.cascade_runner import run_stage_in_process
    m = run_stage_in_process(stage, run_id, profile, as_list(overrides, "overrides"), progress=progress,
                             run_earlier=True)
    if m.get("skipped"):
        print(f"{stage}: already done with the same inputs - skipped (delete its manifest to re-run)")
    return m


def validation_table(run_id: str, stage: str):
    """The stage checkpoint's validation per domain (rows): score, its 95% CI and n prompts (report split, %)."""
    from recipe.reporting.notebook_tables import readable
    from recipe.runs.layout import read_json
    run = RunDir.for_id(run_id)
    v = read_json(run.validation_path(stage)) or {}
    ci = v.get("ci") or {d: {"score": x} for d, x in (v.get("scores") or {}).items()}
    if not ci:
        print(f"{stage}: no validation yet")
        return None
    df = pd.DataFrame([{"domain": d, "score": round(e["score"], 1),
                        "95% CI": "-" if e.get("ci_low") is None else f"[{e['ci_low']:.1f}, {e['ci_high']:.1f}]",
                        "n": e.get("n")} for d, e in ci.items()]).set_index("domain")
    return readable(df, caption=f"{stage}: validation score per domain (avg@k of sampled responses, %, report "
                                f"split; n = prompts)")


def stage_curves(run_id: str, stage: str) -> None:
    """Show the stage's training curves (either backend); says so instead of failing while nothing is logged yet.
    ``swe_rl`` has two phases, each its own figure: agentless (``swe_rl_agentless``, metrics in swe_rl/agentless)
    and agentic (``swe_rl``)."""
    from recipe.reporting import plots
    run = RunDir.for_id(run_id)
    title = stage
    if stage == "swe_rl_agentless":  # the first phase of swe_rl (a row of scores.json, metrics in swe_rl/agentless)
        from recipe.pipeline.stage_runner import PhaseRunDir
        run, stage, title = PhaseRunDir(run, "agentless"), "swe_rl", "swe_rl, agentless phase"
    elif stage == "swe_rl":
        title = "swe_rl, agentic phase"
    try:
        plots.show(plots.plot_stage_curves(run, stage, title=title))
    except FileNotFoundError as e:
        print(f"no curves yet: {e}")


def all_stage_curves(run_id: str) -> None:
    """Every scored checkpoint's training curves, in run order (the report notebook's last section)."""
    from recipe.reporting.run_report import score_table
    for stage, _ in score_table(RunDir.for_id(run_id))[1]:
        stage_curves(run_id, stage)


SCORE_COLS = 5  # domains per table part: five "12.5 [3, 20]" columns fit the output area beside the file browser


def scores_table(run_id: str):
    """Validation score per stage and domain (%) and their average, one decimal."""
    from recipe.reporting.notebook_tables import readable
    df = pd.DataFrame(report_rows(RunDir.for_id(run_id)))
    if df.empty:
        print(f"run {run_id}: no stage has scores yet")
        return None
    return readable(df.set_index("stage").round(1), max_cols=SCORE_COLS + 1,
                    caption="Validation score per stage and domain (%, report split); their CIs are in the next table")


def heatmap(run_id: str) -> None:
    """Show the checkpoint x domain heatmap with each domain's MOPD teacher marked."""
    from recipe.reporting import plots
    plots.show(plots.plot_heatmap(RunDir.for_id(run_id)))


def teachers_table(run_id: str):
    """Which checkpoint teaches which domain: once MOPD ran, per domain its routing slot and teacher, then (a
    second table) every candidate of each ``select`` slot with its selection-split average [95% CI] and n; before
    MOPD, the best report-split checkpoint so far per domain."""
    from IPython.display import display

    from recipe.reporting.run_report import teacher_rows
    from recipe.reporting.notebook_tables import readable, score_ci
    rows = teacher_rows(RunDir.for_id(run_id))
    if not rows:
        print("no teachers yet: teachers.json is written after the first stage's validation")
        return None
    if "slot" not in rows[0]:
        df = pd.DataFrame([{"domain": r["domain"], "teacher": r["teacher"], "score": r["score"]} for r in rows])
        return readable(df.set_index("domain"), caption=f"Best checkpoint per domain so far ({rows[0]['basis']}, %)")
    picks = [r for r in rows if "picked" not in r]
    cands = [r for r in rows if "picked" in r]
    df = pd.DataFrame([{"domain": r["domain"], "slot": r["slot"], "teacher": r["teacher"]} for r in picks])
    main = readable(df.set_index("domain"), caption="MOPD's teacher per domain (mopd.teacher_routing)")
    if not cands:
        return main
    display(main)
    detail = pd.DataFrame([{"slot": r["slot"], "candidate": r["teacher"], "picked": "yes" if r["picked"] else "",
                            "group average [95% CI]": score_ci(r), "n": r["n"]}
                           for r in cands]).set_index(["slot", "candidate"])
    groups = "; ".join(f"{slot}: {dom.replace('+', ', ')}" for slot, dom in
                       dict.fromkeys((r["slot"], r["domain"]) for r in cands))
    return readable(detail, caption="Candidates of each select slot, scored on the selection split: the pick has "
                                    f"the highest average over its group's domains (%, n = prompts). Groups: {groups}")


def cluster_stage(run_id: str, stage: str, profile: str = "paper", overrides: list[str] | None = None, *,
                  submit: bool = False, allow_unpinned: bool = False, allow_dirty: bool = False) -> dict:
    """backend="cluster": render the stage's NeMo-RL job into the run, diff it against the release defaults,
    submit it only when ``submit`` is true, and read its progress back into the run layout."""
    from recipe.cluster import cluster_notebook_api as cluster
    ensure_run(run_id, profile, overrides)
    rendered = cluster.render_stage(run_id, stage, allow_unpinned=allow_unpinned, allow_dirty=allow_dirty)
    return {"rendered": rendered, "diff": cluster.config_diff(rendered),
            "commands": cluster.submit(rendered, submit=submit), "progress": cluster.monitor(run_id, stage)}


# -- what the notebooks teach ---------------------------------------------------------------------------------
DIAGNOSTIC_TAGS = {  # NeMo-RL tag -> what it says
    "train/kept_groups": "prompt groups kept after dynamic filtering (rewards not all equal)",
    "train/overlong_frac": "fraction of responses cut at max_response_tokens",
    "train/masked_frac": "MOPD: fraction of tokens whose importance ratio fell outside the band (masked)",
    "train/probs_ratio": "importance ratio pi_train / pi_inference on trained tokens",
    "train/reverse_kl": "MOPD: sampled reverse KL(student || teacher)",
    "train/kl_penalty": "KL to the reference model",
    "train/updated": "steps with an optimizer update (1) vs none left after filtering (0)",
}


def _config(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None):
    """The run's config when the run exists, else the profile's with ``overrides`` (nothing is written)."""
    from recipe.config import load_config
    run = RunDir.for_id(run_id)
    if run.config_path.exists():
        return open_run(run_id)[1]
    return load_config(profile, as_list(overrides, "overrides"))


def explain(run_id: str, phase: str, profile: str = "tiny", overrides: list[str] | str | None = None):
    """The phase's opening text (what, why, objective, config values in force, what to look for) as Markdown,
    rendered from the config so it cannot go stale (``recipe.reporting.stage_docs``)."""
    from IPython.display import Markdown

    from recipe.reporting.stage_docs import explain as text
    return Markdown(text(_config(run_id, profile, overrides), phase))


def rl_stage_menu(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None):
    from IPython.display import Markdown

    from recipe.reporting.stage_docs import rl_stage_menu as text
    return Markdown(text(_config(run_id, profile, overrides)))


def diagnostics(run_id: str, stage: str):
    """First / mean / last value of the step diagnostics no curve shows (either backend, NeMo-RL tag names)."""
    from recipe.reporting.metrics_reader import stage_scalars
    from recipe.reporting.notebook_tables import readable
    try:
        df = stage_scalars(RunDir.for_id(run_id), stage)
    except FileNotFoundError as e:
        print(f"no diagnostics yet: {e}")
        return None
    rows = [{"metric": tag, "first": df[tag].dropna().iloc[0], "mean": df[tag].mean(),
             "last": df[tag].dropna().iloc[-1], "steps": int(df[tag].notna().sum()), "meaning": meaning}
            for tag, meaning in DIAGNOSTIC_TAGS.items() if tag in df.columns and df[tag].notna().any()]
    if not rows:
        print(f"{stage}: none of the diagnostics ({', '.join(DIAGNOSTIC_TAGS)}) was logged")
        return None
    return readable(pd.DataFrame(rows).set_index("metric"), wrap=("meaning",))


def sample_completions(run_id: str, stage: str, per_domain: int = 1, max_chars: int = 400):
    """Validation completions of the same prompts before (the stage's input checkpoint) and after the stage, with
    their rewards (first sample of each prompt; from the per-sample validation files). Newlines are kept."""
    from recipe.validation.samples import read_samples, samples_path
    from recipe.reporting.notebook_tables import readable
    run, cfg = open_run(run_id)
    after = read_samples(samples_path(run, stage))
    before_stage = cfg.input_stage(stage) if stage != "sft" else None
    before = {}
    if before_stage is not None and samples_path(run, before_stage).exists():
        before = {(r["domain"], r["item_id"]): r for r in read_samples(samples_path(run, before_stage))
                  if r.get("sample", 0) == 0}
    prompts = {}
    try:
        from recipe.domains.data_phase import load_splits
        splits = load_splits(run, cfg, splits=("val",))
        prompts = {(d, r["id"]): next((m.get("content", "") for m in reversed(r.get("messages", []))
                                       if m.get("role") == "user"), "")
                   for d, s in splits.items() for r in s.get("val", [])}
    except (FileNotFoundError, KeyError, ValueError):
        pass

    def cut(text) -> str:
        text = str(text or "").strip()
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"

    rows, seen = [], {}
    before_col, after_col = f"before ({before_stage or 'untrained'})", f"after ({stage})"
    for r in after:
        key = (r["domain"], r["item_id"])
        if r.get("sample", 0) != 0 or seen.get(r["domain"], 0) >= per_domain:
            continue
        seen[r["domain"]] = seen.get(r["domain"], 0) + 1
        b = before.get(key, {})
        rows.append({"domain": r["domain"], "reward before": b.get("reward"), "reward after": r.get("reward"),
                     "prompt": cut(prompts.get(key, r["item_id"])), before_col: cut(b.get("response", "-")),
                     after_col: cut(r.get("response"))})
    text_cols = ("prompt", before_col, after_col)
    return readable(pd.DataFrame(rows).set_index("domain"), wrap=text_cols, pre=text_cols,
                    caption=f"First sample per prompt; texts cut at {max_chars} characters (…)")


def run_missing_phases(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None) -> list[str]:
    """For the report notebook on its own: create the run if needed and run every stage up to the profile's
    ``run.until`` that is not done yet (data first). Returns the stages that were run."""
    from recipe.config.schema import STAGE_PLAN
    from recipe.pipeline.cascade_runner import run_stage_in_process
    run, cfg = ensure_run(run_id, profile, overrides)
    missing = [s for s in STAGE_PLAN[: STAGE_PLAN.index(cfg.run.until) + 1] if not run.is_done(s)]
    if missing:
        print(f"run {run_id}: running missing phases {', '.join(missing)}")
        run_stage_in_process(cfg.run.until, run_id, profile, as_list(overrides, "overrides"), run_earlier=True)
    return missing


def _n_header(domain: str, entries: list[dict]) -> str:
    ns = {e.get("n") for e in entries if e.get("n") is not None}
    return f"{domain} (n={ns.pop()})" if len(ns) == 1 else domain


def report_table(run_id: str):
    """The numbers of `recipe report --json`: per stage (rows) and domain (columns), score [95% CI] in %, n prompts
    in the column header; the exact interval on hover."""
    from recipe.reporting.run_report import report_data
    from recipe.reporting.notebook_tables import exact_ci, readable, score_ci
    stages = report_data(RunDir.for_id(run_id))["stages"]
    domains = list(dict.fromkeys(d for doms in stages.values() for d in doms))
    head = {d: _n_header(d, [doms[d] for doms in stages.values() if d in doms]) for d in domains}
    cells = pd.DataFrame({head[d]: {s: score_ci(doms[d]) if d in doms else "-" for s, doms in stages.items()}
                          for d in domains})
    tips = pd.DataFrame({head[d]: {s: exact_ci(doms[d]) if d in doms else "" for s, doms in stages.items()}
                         for d in domains})
    return readable(cells.rename_axis("stage"), tooltips=tips, max_cols=SCORE_COLS,
                    caption="Validation score per stage and domain: score [95% CI] in %, n = prompts; hover a cell "
                            "for the interval to two decimals.")


def deltas_table(run_id: str):
    """Each stage minus its input checkpoint, per domain: paired bootstrap delta [95% CI] in points; a delta whose
    interval excludes 0 is bold (a change shown), the others are changes not shown."""
    from recipe.reporting.run_report import report_data
    from recipe.reporting.notebook_tables import exact_ci, readable, score_ci
    deltas = report_data(RunDir.for_id(run_id))["deltas"]
    rows = {f"{s} - {dl['input']}": {d: e for d, e in dl.items() if d != "input"} for s, dl in deltas.items()}
    if not rows:
        print("no deltas yet: a stage's delta needs its input checkpoint's validation samples")
        return None
    domains = list(dict.fromkeys(d for doms in rows.values() for d in doms))
    head = {d: _n_header(d, [doms[d] for doms in rows.values() if d in doms]) for d in domains}
    cells = pd.DataFrame({head[d]: {r: score_ci(doms[d], signed=True) if d in doms else "-"
                                    for r, doms in rows.items()} for d in domains}).rename_axis("stage - input")
    tips = pd.DataFrame({head[d]: {r: exact_ci(doms[d]) if d in doms else "" for r, doms in rows.items()}
                         for d in domains})
    shown = pd.DataFrame({head[d]: {r: d in doms and doms[d].get("ci_low") is not None
                                    and (doms[d]["ci_low"] > 0 or doms[d]["ci_high"] < 0)
                                    for r, doms in rows.items()} for d in domains})
    return readable(cells, tooltips=tips, cell_css=shown.map(lambda b: "font-weight: bold" if b else ""),
                    max_cols=SCORE_COLS, caption="Change over the input checkpoint, points: delta [95% CI] (paired "
                    "bootstrap over prompts, same sampling seeds). Bold: the interval excludes 0 (a change shown); "
                    "the rest are inside the noise.")


# -- the closing cell of each notebook: what the run showed, and where to go next ---------------------------------
def summary(run_id: str, phase: str):
    """Markdown for the last cell of a phase notebook (``recipe.reporting.phase_summaries``)."""
    from IPython.display import Markdown

    from recipe.reporting import phase_summaries as summaries
    run = RunDir.for_id(run_id)
    if not run.config_path.exists():
        return Markdown(f"Run `{run_id}` does not exist yet.\n\n{summaries.next_step(phase)}")
    if phase == "report":
        return Markdown(summaries.report_summary(run))
    cfg = open_run(run_id)[1]
    if phase == "data":
        return Markdown(summaries.data_summary(run, cfg))
    return Markdown(summaries.stage_summary(run, cfg, phase))


def next_step(phase: str):
    from IPython.display import Markdown

    from recipe.reporting.phase_summaries import next_step as text
    return Markdown(text(phase))


def counts_plot(counts: pd.DataFrame) -> None:
    """Prompts per domain and split (the data phase's counts table) as grouped bars."""
    from recipe.reporting import plots
    plots.show(plots.plot_counts(counts))


def curation_plot(report) -> None:
    """What curation kept and dropped per source (``recipe.data.curation_report_views.plot_report``), axes labelled."""
    import matplotlib.pyplot as plt

    from recipe.data.curation_report_views import plot_report, report_table
    from recipe.reporting import plots
    fig, ax = plt.subplots(figsize=(plots.PANEL_W * 2, 0.35 * max(len(report_table(report)) - 1, 3) + 1.6))
    plot_report(report, ax=ax)
    ax.set_ylabel("source file")
    fig.tight_layout()
    plots.show(fig)
