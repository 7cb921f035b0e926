"""``recipe run``: data phase, then every selected stage, then the report - through the papermill notebooks
(default) or in-process. Stages outside the selected range are listed as not run; a selected stage that the
backend cannot run fails before anything starts (never skipped silently)."""
from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

from rich.console import Console

from recipe.config import load_config
from recipe.config.schema import STAGE_PLAN
from recipe.pipeline.kernel import SharedKernel, register_shared_kernel_engine
from recipe.reporting.run_report import print_report
from recipe.pipeline.stage_inputs import StageNotImplemented, check_runnable, stage_inputs
from recipe.runs.layout import DATA_PHASE, REPORT_PHASE, RunDir, write_json_atomic
from recipe.runs.run_init import check_run_matches, default_run_id, init_run, open_or_init_run

# Training code (torch, transformers: ~5 s to import) is imported where it runs: in the notebook kernel, or in this
# process for --no-notebooks. Through the notebooks this process only orchestrates, so the kernel starts at once.

__all__ = ["StageNotImplemented", "run_pipeline", "run_stage_in_process", "select_stages", "NOTEBOOKS"]

console = Console(stderr=True)
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = {DATA_PHASE: "00_data.ipynb", "sft": "10_sft.ipynb", "mopd": "40_mopd.ipynb",
             REPORT_PHASE: "90_report.ipynb"}


def notebook_for(phase: str) -> Path:
    return NOTEBOOK_DIR / NOTEBOOKS.get(phase, "30_cascade_rl_stage.ipynb")


def select_stages(from_stage: str | None, until: str) -> list[str]:
    for s in (from_stage, until):
        if s is not None and s not in STAGE_PLAN:
            raise ValueError(f"unknown stage {s!r}; the plan is {', '.join(STAGE_PLAN)}")
    lo = STAGE_PLAN.index(from_stage) if from_stage else 0
    hi = STAGE_PLAN.index(until)
    if lo > hi:
        raise ValueError(f"--from {from_stage} comes after --until {until} in the plan")
    return list(STAGE_PLAN[lo:hi + 1])


def _execute_notebook(phase: str, run: RunDir, stage: str | None = None, kernel=None) -> None:
    """Execute ``phase``'s notebook into the run directory; on ``kernel`` (a :class:`SharedKernel`) when given,
    else on a kernel of its own."""
    import papermill as pm
    out = run.notebook_path(phase)
    out.parent.mkdir(parents=True, exist_ok=True)
    params = {"run_id": run.run_id, "profile": run.read_run_json().get("profile", "tiny")}
    if stage is not None and notebook_for(phase).name == "30_cascade_rl_stage.ipynb":
        params["stage"] = stage  # the other notebooks fix their stage
    if phase == REPORT_PHASE:
        params["run_missing"] = False  # `--until X` means the stages after X stay not run
    kernel_args = {"kernel_manager_class": "recipe.pipeline.kernel.IPCKernelManager"}
    if kernel is not None:
        kernel_args = {"engine_name": register_shared_kernel_engine(), "km": kernel.manager()}
    pm.execute_notebook(str(notebook_for(phase)), str(out), parameters=params, kernel_name="python3",
                        progress_bar=False, cwd=str(Path.cwd()), log_output=False, **kernel_args)


def run_pipeline(profile: str = "tiny", run_id: str | None = None, overrides: list[str] | tuple = (),
                 from_stage: str | None = None, until: str | None = None, via_notebooks: bool = True,
                 kernel_per_notebook: bool = False) -> RunDir:
    """Data phase, the selected stages and the report, each through its notebook (one shared kernel, or one
    kernel per notebook with ``kernel_per_notebook``) or in-process (``via_notebooks=False``)."""
    cfg = load_config(profile, overrides)
    if cfg.run.backend != "local":
        raise StageNotImplemented(f"profile {cfg.profile!r} uses backend {cfg.run.backend!r}: render its stages with "
                                  f"`recipe cluster render --profile {profile} --stage <stage> --run-id <id>`")
    stages = select_stages(from_stage, until or cfg.run.until)
    for s in stages:  # fail before anything is written
        check_runnable(cfg, s)
    existing = RunDir.for_id(run_id or default_run_id(cfg))
    if existing.exists():  # overrides re-resolve an existing run on purpose; another profile is refused
        check_run_matches(existing, profile, ())
    run, cfg = init_run(profile, run_id, overrides, cfg=cfg)
    not_run = [s for s in STAGE_PLAN if s not in stages]
    console.print(f"[bold]run[/] {run.run_id} ({cfg.profile}) -> {run.path}")
    console.print(f"stages: {' -> '.join(stages)}" + (f"   (not run: {', '.join(not_run)})" if not_run else ""))
    # The shared kernel starts with the run and imports the training code (torch, transformers, the stage runner)
    # while the data notebook runs on a light kernel of its own; the validation lanes (recipe.validation.lanes) are then
    # forked from it (before any torch work), so they import nothing themselves
    prestart = ("import recipe.pipeline.phase_notebook_api, recipe.pipeline.stage_runner\n"
                "from recipe.validation.lanes import prestart_lanes\n"
                f"prestart_lanes({cfg.evaluation.lanes}, fork=True)")
    kernel = None
    if via_notebooks and not kernel_per_notebook:
        kernel = SharedKernel(cwd=str(Path.cwd()), startup_code=prestart)
    elif not via_notebooks:
        from recipe.validation.lanes import prestart_lanes
        prestart_lanes(cfg.evaluation.lanes)
    with kernel or contextlib.nullcontext():
        if kernel is not None:
            kernel.start_early()  # imports + lanes on one core while the data notebook runs on a kernel of its own
        timings = _run_phases(run, cfg, [DATA_PHASE, *stages, REPORT_PHASE], via_notebooks, kernel)
        if cfg.benchmarks.eval_phase.enabled:  # evaluate the final checkpoint (recipe/eval/run_phase.py)
            t0 = time.time()
            console.print("  eval: running")
            if kernel is not None:  # where torch is loaded already
                print(kernel.run_code("from recipe.eval.run_phase import run_eval_phase_of\n"
                                      f"_ = run_eval_phase_of({run.run_id!r}, {stages[-1]!r})"), end="")
            else:
                from recipe.eval.run_phase import run_eval_phase
                run_eval_phase(run, cfg, stages[-1])
            timings["eval"] = round(time.time() - t0, 2)
        data = _report_data_in(kernel, run) if kernel is not None else None
        if kernel is not None:
            kernel.close(now=True)  # every phase's files are written (atomically): no graceful exit to wait for
    write_json_atomic(run.path / "timings.json", {"phases": timings, "total_s": round(sum(timings.values()), 2)})
    print_report(run, not_run=not_run, data=data)
    return run


_DATA_MARK = "@@recipe-report-data "


def _report_data_in(kernel: SharedKernel, run: RunDir) -> dict | None:
    """The report's data (paired bootstrap deltas, README's claims on this run), computed in the kernel (torch is
    loaded there; importing it here would cost the CLI ~2-3 s at the end of every run); None (the CLI computes
    them) if that fails."""
    import json
    try:
        out = kernel.run_code("import json as _json\nfrom recipe.reporting.run_report import report_data as _report_data\n"
                              "from recipe.runs.layout import RunDir as _RunDir\n"
                              f"print({_DATA_MARK!r} + _json.dumps(_report_data(_RunDir.for_id({run.run_id!r}))))")
        line = next(ln for ln in out.splitlines() if ln.startswith(_DATA_MARK))
        return json.loads(line[len(_DATA_MARK):])
    except (RuntimeError, StopIteration, ValueError):
        return None


def _run_phases(run: RunDir, cfg, phases: list[str], via_notebooks: bool, kernel) -> dict[str, float]:
    """Run each phase (skipping stages that are done with the same inputs); returns seconds per phase."""
    timings = {}
    for phase in phases:
        t0 = time.time()
        if phase in STAGE_PLAN and _is_current(run, cfg, phase):
            console.print(f"  {phase}: done, inputs unchanged - skipped")
            timings[phase] = 0.0
            continue
        console.print(f"  {phase}: running" + (" (notebook)" if via_notebooks else ""))
        with _live_progress(run, cfg, phase, tty_bar=not via_notebooks and sys.stderr.isatty()):
            if via_notebooks:  # the data phase needs neither torch nor the shared kernel's lanes: its own kernel
                _execute_notebook(phase, run, phase if phase in STAGE_PLAN else None,
                                  None if phase == DATA_PHASE else kernel)
            elif phase == DATA_PHASE:
                from recipe.domains.data_phase import prepare_data
                prepare_data(run, cfg)
            elif phase in STAGE_PLAN:
                from recipe.pipeline.stage_runner import run_stage
                run_stage(run, cfg, phase, progress=sys.stderr.isatty())
        timings[phase] = round(time.time() - t0, 2)
        console.print(f"  {phase}: finished in {timings[phase]:.1f} s")
    return timings


def _live_progress(run: RunDir, cfg, phase: str, tty_bar: bool):
    """Headless progress for a training phase: follow its metrics.jsonl and print step, reward and ETA (a terminal
    running in-process gets tqdm's bar instead)."""
    from recipe.train.progress import StageTail
    steps = getattr(cfg.stage(phase), "steps", None) if phase in STAGE_PLAN else None
    if tty_bar or not steps:
        return contextlib.nullcontext()
    return StageTail(run.metrics_path(phase), phase, steps, emit=lambda line: console.print(f"    {line}"))


def _is_current(run: RunDir, cfg, stage: str) -> bool:
    m = run.read_manifest(stage)
    if not m or m.get("status") != "done":
        return False
    try:
        return m.get("inputs") == stage_inputs(run, cfg, stage)
    except (FileNotFoundError, ValueError):
        return False


def run_stage_in_process(stage: str, run_id: str, profile: str | None = "tiny", overrides: list[str] | tuple = (),
                         progress: bool = True, run_earlier: bool = False, reconfigure: bool = False,
                         force: bool = False) -> dict:
    """One stage in-process (`recipe stage NAME`; the notebooks with ``run_earlier=True``, which first runs
    earlier stages that are not done). The data phase runs first when missing. Returns the stage's manifest.
    An existing run asked for with another profile or other overrides is an error unless ``reconfigure``."""
    if stage != DATA_PHASE and stage not in STAGE_PLAN:
        raise KeyError(f"unknown stage {stage!r}; the plan is {', '.join(STAGE_PLAN)}")
    from recipe.domains.data_phase import prepare_data
    from recipe.pipeline.stage_runner import run_stage
    run, cfg = open_or_init_run(run_id, profile, overrides, reconfigure=reconfigure)
    prepare_data(run, cfg)  # skipped when done with the same inputs
    if stage == DATA_PHASE:
        return run.read_manifest(DATA_PHASE)
    earlier = [s for s in STAGE_PLAN[: STAGE_PLAN.index(stage)] if not run.is_done(s)] if run_earlier else []
    for s in [*earlier, stage]:  # refuse before training anything
        check_runnable(cfg, s)
    for s in earlier:
        console.print(f"earlier stage {s} is not done in run {run_id}: running it first")
        run_stage(run, cfg, s, progress=progress)
    return run_stage(run, cfg, stage, progress=progress, force=force)  # force: train again though done
