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
    from recipe.pipeline import plots
    return plots.plot_stage_curves(RunDir.for_id(run_id), stage)


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
