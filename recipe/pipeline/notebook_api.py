"""What the notebooks call (they hold no logic): one function per cell-sized step.

Every notebook takes papermill parameters ``run_id``, ``profile``, ``overrides`` (list of ``key=value``) and, for
stage notebooks, ``stage`` and ``backend`` (``local`` trains in-process; ``cluster`` renders/submits/monitors a
NeMo-RL job through ``recipe.cluster.notebook_api``). Run top to bottom interactively, a notebook creates the run
if it does not exist and runs earlier phases that are missing, so each one also works on its own.
"""
from __future__ import annotations

import pandas as pd

from recipe.pipeline.data_phase import prepare_data
from recipe.pipeline.params import as_list
from recipe.pipeline.report import report_rows
from recipe.pipeline.run_init import open_or_init_run, open_run
from recipe.runs.layout import DATA_PHASE, RunDir

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
    from recipe.data.report import report_table
    sources, decontaminate_against = as_list(sources, "sources"), as_list(decontaminate_against, "decontaminate_against")
    run, cfg = open_run(run_id)
    d = run.stage_dir(DATA_PHASE)
    if sources:
        inputs, evals = [str(p) for p in sources], [str(p) for p in (decontaminate_against or [])]
    else:
        inputs = [str(p) for p in sorted(d.glob("*_train.jsonl"))]
        evals = [str(p) for p in sorted(d.glob("*_val.jsonl"))] + [str(p) for p in (decontaminate_against or [])]
    report = curate(inputs, str(d / "curated"), fmt="auto", decontaminate_against=evals, config=cfg.data)
    return report, report_table(report)


def stage(run_id: str, stage: str, profile: str = "tiny", overrides: list[str] | None = None,
          progress: bool = True) -> dict:
    """Run one stage in-process (earlier missing phases first); returns its manifest."""
    from recipe.pipeline.runner import run_stage_in_process
    m = run_stage_in_process(stage, run_id, profile, as_list(overrides, "overrides"), progress=progress,
                             run_earlier=True)
    if m.get("skipped"):
        print(f"{stage}: already done with the same inputs - skipped (delete its manifest to re-run)")
    return m


def validation_table(run_id: str, stage: str) -> pd.DataFrame:
    run = RunDir.for_id(run_id)
    return pd.DataFrame([run.read_validation(stage)], index=[stage])


def stage_curves(run_id: str, stage: str):
    """The stage's training curves (either backend); says so instead of failing while nothing is logged yet."""
    from recipe.pipeline import plots
    run = RunDir.for_id(run_id)
    if stage == "swe_rl_agentless":  # the first phase of swe_rl (a row of scores.json, metrics in swe_rl/agentless)
        from recipe.pipeline.stage_runner import PhaseRunDir
        run, stage = PhaseRunDir(run, "agentless"), "swe_rl"
    try:
        return plots.plot_stage_curves(run, stage)
    except FileNotFoundError as e:
        print(f"no curves yet: {e}")
        return None


def scores_table(run_id: str) -> pd.DataFrame:
    return pd.DataFrame(report_rows(RunDir.for_id(run_id))).set_index("stage")


def heatmap(run_id: str):
    from recipe.pipeline import plots
    return plots.plot_heatmap(RunDir.for_id(run_id))


def teachers_table(run_id: str) -> pd.DataFrame:
    from recipe.pipeline.report import teacher_rows
    return pd.DataFrame(teacher_rows(RunDir.for_id(run_id)))


def cluster_stage(run_id: str, stage: str, profile: str = "paper", overrides: list[str] | None = None, *,
                  submit: bool = False, allow_unpinned: bool = False, allow_dirty: bool = False) -> dict:
    """backend="cluster": render the stage's NeMo-RL job into the run, diff it against the release defaults,
    submit it only when ``submit`` is true, and read its progress back into the run layout."""
    from recipe.cluster import notebook_api as cluster
    ensure_run(run_id, profile, overrides)
    rendered = cluster.render_stage(run_id, stage, allow_unpinned=allow_unpinned, allow_dirty=allow_dirty)
    return {"rendered": rendered, "diff": cluster.config_diff(rendered),
            "commands": cluster.submit(rendered, submit=submit), "progress": cluster.monitor(run_id, stage)}


# -- what the notebooks teach (issue 12 item 4) -------------------------------------------------------------------
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
    rendered from the config so it cannot go stale (``recipe.pipeline.stage_docs``)."""
    from IPython.display import Markdown

    from recipe.pipeline.stage_docs import explain as text
    return Markdown(text(_config(run_id, profile, overrides), phase))


def rl_stage_menu(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None):
    from IPython.display import Markdown

    from recipe.pipeline.stage_docs import rl_stage_menu as text
    return Markdown(text(_config(run_id, profile, overrides)))


def diagnostics(run_id: str, stage: str) -> pd.DataFrame:
    """First / mean / last value of the step diagnostics no curve shows (either backend, NeMo-RL tag names)."""
    from recipe.pipeline.metrics_reader import stage_scalars
    try:
        df = stage_scalars(RunDir.for_id(run_id), stage)
    except FileNotFoundError as e:
        print(f"no diagnostics yet: {e}")
        return pd.DataFrame(columns=["meaning"])
    rows = [{"metric": tag, "meaning": meaning, "first": df[tag].dropna().iloc[0], "mean": df[tag].mean(),
             "last": df[tag].dropna().iloc[-1], "steps": int(df[tag].notna().sum())}
            for tag, meaning in DIAGNOSTIC_TAGS.items() if tag in df.columns and df[tag].notna().any()]
    return pd.DataFrame(rows).set_index("metric") if rows else pd.DataFrame(columns=["meaning"])


def sample_completions(run_id: str, stage: str, per_domain: int = 1, max_chars: int = 160) -> pd.DataFrame:
    """Validation completions of the same prompts before (the stage's input checkpoint) and after the stage, with
    their rewards (first sample of each prompt; from the per-sample validation files)."""
    from recipe.eval.samples import read_samples, samples_path
    run, cfg = open_run(run_id)
    after = read_samples(samples_path(run, stage))
    before_stage = cfg.input_stage(stage) if stage != "sft" else None
    before = {}
    if before_stage is not None and samples_path(run, before_stage).exists():
        before = {(r["domain"], r["item_id"]): r for r in read_samples(samples_path(run, before_stage))
                  if r.get("sample", 0) == 0}
    prompts = {}
    try:
        from recipe.pipeline.data_phase import load_splits
        splits = load_splits(run, cfg, splits=("val",))
        prompts = {(d, r["id"]): next((m.get("content", "") for m in reversed(r.get("messages", []))
                                       if m.get("role") == "user"), "")
                   for d, s in splits.items() for r in s.get("val", [])}
    except (FileNotFoundError, KeyError, ValueError):
        pass

    def cut(text) -> str:
        text = str(text or "").replace("\n", " ")
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"

    rows, seen = [], {}
    for r in after:
        key = (r["domain"], r["item_id"])
        if r.get("sample", 0) != 0 or seen.get(r["domain"], 0) >= per_domain:
            continue
        seen[r["domain"]] = seen.get(r["domain"], 0) + 1
        b = before.get(key, {})
        rows.append({"domain": r["domain"], "prompt": cut(prompts.get(key, r["item_id"])),
                     f"before ({before_stage or 'untrained'})": cut(b.get("response", "-")),
                     "reward before": b.get("reward"), f"after ({stage})": cut(r.get("response")),
                     "reward after": r.get("reward")})
    return pd.DataFrame(rows)


def run_missing_phases(run_id: str, profile: str = "tiny", overrides: list[str] | str | None = None) -> list[str]:
    """For the report notebook on its own: create the run if needed and run every stage up to the profile's
    ``run.until`` that is not done yet (data first). Returns the stages that were run."""
    from recipe.config.schema import STAGE_PLAN
    from recipe.pipeline.runner import run_stage_in_process
    run, cfg = ensure_run(run_id, profile, overrides)
    missing = [s for s in STAGE_PLAN[: STAGE_PLAN.index(cfg.run.until) + 1] if not run.is_done(s)]
    if missing:
        print(f"run {run_id}: running missing phases {', '.join(missing)}")
        run_stage_in_process(cfg.run.until, run_id, profile, as_list(overrides, "overrides"), run_earlier=True)
    return missing


def report_table(run_id: str) -> pd.DataFrame:
    """The numbers of `recipe report --json`: per stage and domain, score [95% CI] (n prompts)."""
    from recipe.pipeline.report import report_data
    data = report_data(RunDir.for_id(run_id))

    def cell(e: dict) -> str:
        if e.get("ci_low") is None:
            return f"{e['score']:.1f}"
        return f"{e['score']:.1f} [{e['ci_low']:.1f}, {e['ci_high']:.1f}] n={e['n']}"

    return pd.DataFrame({s: {d: cell(e) for d, e in doms.items()} for s, doms in data["stages"].items()}).T


def deltas_table(run_id: str) -> pd.DataFrame:
    """Each stage minus its input checkpoint, per domain: paired bootstrap delta [95% CI] in points."""
    from recipe.pipeline.report import report_data
    data = report_data(RunDir.for_id(run_id))
    return pd.DataFrame({f"{s} - {dl['input']}": {d: f"{e['score']:+.1f} [{e['ci_low']:+.1f}, {e['ci_high']:+.1f}]"
                                                for d, e in dl.items() if d != "input"}
                         for s, dl in data["deltas"].items()}).T
