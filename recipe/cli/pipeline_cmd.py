"""``recipe run``, ``recipe stage``, ``recipe report``, ``recipe compare-to-start`` and ``recipe config``: the
cascade itself (``recipe eval``: eval_cmd)."""
from __future__ import annotations

from functools import partial
from typing import List, Optional

import typer
from rich.console import Console

from recipe.cli.options import benchmarks_option, set_option, with_benchmarks
from recipe.cli.user_errors import fail, user_errors

console = Console()


_fail = partial(fail, console)


def _user_errors():
    """Bad input (config, unknown stage or run, a stage this backend cannot run) -> message + exit code 2.
    ConfigError and StageNotImplemented are ValueError / RuntimeError subclasses with a complete message."""
    from recipe.pipeline.stage_inputs import StageNotImplemented
    from recipe.rewards.nltk_data import NltkDataMissing
    return user_errors(console, ValueError, FileNotFoundError, KeyError, StageNotImplemented, NltkDataMissing)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        profile: str = typer.Option("tiny", help="Profile name (tiny|small|paper) or a profile directory / "
                                    "config.yaml."),
        run_id: Optional[str] = typer.Option(None, help="Run id (default: <profile>-seed<seed>)."),
        from_stage: Optional[str] = typer.Option(None, "--from", help="First stage to (re)run."),
        until: Optional[str] = typer.Option(None, help="Last stage to run (default: the profile's run.until)."),
        set_: List[str] = set_option("Override a config value: key=value, or @SET for a named override set such "
                                     "as @small-smoke (repeatable)."),
        benchmarks: Optional[str] = benchmarks_option(),
        no_notebooks: bool = typer.Option(False, "--no-notebooks",
                                          help="Run stages in-process instead of through the notebooks."),
        kernel_per_notebook: bool = typer.Option(False, "--kernel-per-notebook",
                                                 help="Start a kernel per notebook instead of one shared "
                                                      "kernel (its namespace is reset between notebooks)."),
        overrides: List[str] = typer.Argument(None, help="More key=value overrides."),
    ) -> None:
        """Run the cascade end to end through the notebooks (papermill), then print the final table."""
        from recipe.pipeline.cascade_runner import run_pipeline
        with _user_errors():
            run_pipeline(profile=profile, run_id=run_id, overrides=with_benchmarks([*set_, *(overrides or [])],
                                                                         benchmarks),
                         from_stage=from_stage, until=until, via_notebooks=not no_notebooks,
                         kernel_per_notebook=kernel_per_notebook)

    @app.command("stage")
    def stage(
        name: str = typer.Argument(..., help="Stage name, e.g. sft, if_rl, multi_domain_rl, mopd."),
        run_id: str = typer.Option(..., help="Run id; created from --profile if it does not exist."),
        profile: Optional[str] = typer.Option(None, help="Profile used when the run is created (default tiny); on an "
                                              "existing run it must be the run's profile."),
        set_: List[str] = typer.Option([], "--set", "-s", help="key=value override: the run's config is re-resolved "
                                       "from --profile plus these (stages whose inputs change re-run)."),
        force: bool = typer.Option(False, "--force", help="Train the stage again although it is done with the same "
                                   "inputs (its checkpoint is replaced)."),
    ) -> None:
        """Run one stage of a run in-process (what the stage notebook calls); missing data is generated first."""
        from recipe.pipeline.cascade_runner import run_stage_in_process
        with _user_errors():
            manifest = run_stage_in_process(name, run_id=run_id, profile=profile, overrides=set_, reconfigure=True,
                                            force=force)
        if (manifest or {}).get("skipped"):
            console.print(f"stage {name} of run {run_id} is already done with these inputs: nothing to do (`recipe "
                          f"report --run-id {run_id}` shows its scores). To train it again: `recipe stage {name} "
                          f"--run-id {run_id} --force`; a stage whose config changes (-s) re-runs by itself.")

    @app.command("report")
    def report(run_id: str = typer.Option(..., help="Run id."),
               as_json: bool = typer.Option(False, "--json", help="Print scores with 95% CIs, paired-bootstrap "
                                            "deltas of each stage over its input, and teachers as JSON."),
               costs: bool = typer.Option(False, "--costs", help="Print what each finished stage cost instead: "
                                          "device, seconds, tokens/s, peak memory (with --json: as JSON)."),
               ci: bool = typer.Option(False, "--ci", help="Also print every score with its 95% CI and n (one "
                                       "row per checkpoint).")) -> None:
        """Print the checkpoint x domain table, each stage's paired-bootstrap delta over its input with its 95% CI, and
        the chosen teachers of a run (--ci: every score's CI and n too)."""
        from recipe.reporting.run_report import print_report, report_data
        from recipe.runs import RunDir
        with _user_errors():
            run = RunDir.for_id(run_id)
            run.read_run_json()  # a clear error for a run that does not exist
            if costs:
                from recipe.reporting.stage_costs import print_stage_costs, stage_cost_rows
                if as_json:
                    import json
                    typer.echo(json.dumps(stage_cost_rows(run), indent=2))
                else:
                    print_stage_costs(run, console=console)
            elif as_json:
                import json
                typer.echo(json.dumps(report_data(run), indent=2))
            else:
                data = report_data(run)
                print_report(run, data=data)
                if ci:
                    from recipe.reporting.report_intervals import print_score_intervals
                    print_score_intervals(data, run.run_id, console=console)

    @app.command("compare-to-start")
    def compare_to_start_cmd(
        run_id: str = typer.Option(..., help="Run id."),
        stage: Optional[str] = typer.Option(None, help="Checkpoint to compare (default: the run's last finished "
                                            "stage)."),
        start: Optional[str] = typer.Option(None, help="Model folder the run started from (default: the run's "
                                            "model.name)."),
        tiny_limit: Optional[int] = typer.Option(None, help="Rows of each tiny suite (default: the eval phase's)."),
        ifeval: Optional[int] = typer.Option(None, help="IFEval rows (default: the eval phase's real_suites)."),
        start_instruct: bool = typer.Option(False, "--start-instruct", help="Score the start model in instruct mode "
                                            "(its own, when it was never trained to think), the checkpoint in the eval "
                                            "phase's mode."),
        as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
        benchmarks: Optional[str] = benchmarks_option(),
        set_: List[str] = set_option("key=value override of the run's config for this comparison, e.g. "
                                     "benchmarks.allow_hub=true (repeatable)."),
        rows: bool = typer.Option(False, "--rows", help="The start model in instruct mode and the checkpoints of "
                                  "benchmarks.compare_to_start.stages plus the last, on IFEval / IFBench (4 metrics and "
                                  "the card's mean) and the tiny suites: one row per suite x metric x model "
                                  "(eval/before_after/rows/rows.json, ifeval_samples.jsonl)."),
        ifbench: Optional[int] = typer.Option(None, help="With --rows: IFBench rows (default: compare_to_start's; "
                                              "0: no IFBench)."),
        if_max_tokens: Optional[int] = typer.Option(None, help="With --rows: new tokens of an IF answer (default: "
                                                    "compare_to_start.if_max_tokens)."),
    ) -> None:
        """Evaluate the model a run started from and the run's checkpoint on the same rows (the tiny suites of its
        domains and the IFEval slice), with 95% CIs and the paired-bootstrap delta per suite."""
        from recipe.config import load_config
        from recipe.pipeline.before_after import compare_to_start, print_comparison
        from recipe.runs import RunDir
        with _user_errors():
            run = RunDir.for_id(run_id)
            run.read_run_json()  # a clear error for a run that does not exist
            cfg = load_config(run.config_path, with_benchmarks(set_, benchmarks))
            if rows:
                _compare_rows(run, cfg, start=start, stage=stage, tiny_limit=tiny_limit, ifeval=ifeval,
                              ifbench=ifbench, if_max_tokens=if_max_tokens, as_json=as_json)
                return
            real = {"ifeval": ifeval} if ifeval else None
            comparison = compare_to_start(run, cfg, start=start, stage=stage, tiny_limit=tiny_limit, real_suites=real,
                                          start_instruct=start_instruct)
            if as_json:
                import json
                typer.echo(json.dumps(comparison, indent=2))
            else:
                print_comparison(comparison, console=console)

    def _compare_rows(run, cfg, *, start, stage, tiny_limit, ifeval, ifbench, if_max_tokens, as_json) -> None:
        from recipe.pipeline.before_after import last_finished_stage
        from recipe.pipeline.before_after_rows import compare_rows, print_rows
        # a count given replaces the config's; 0 leaves that suite out (IFEval first, IFBench later if time allows)
        if_suites = {**cfg.benchmarks.compare_to_start.if_suites,
                     **{name: n for name, n in (("ifeval", ifeval), ("ifbench", ifbench)) if n is not None}}
        if_suites = {name: n for name, n in if_suites.items() if n}
        result = compare_rows(run, cfg, start=start, last=stage or last_finished_stage(run, cfg), if_suites=if_suites,
                              tiny_limit=tiny_limit, if_max_tokens=if_max_tokens,
                              progress=lambda m: typer.echo(m, err=True))
        if as_json:
            import json
            typer.echo(json.dumps(result, indent=2))
        else:
            print_rows(result, console=console)

    @app.command("config")
    def config(
        profile_arg: Optional[str] = typer.Argument(None, metavar="PROFILE", help="tiny | small | paper, or a "
                                                    "profile directory / config.yaml (default tiny)."),
        profile: Optional[str] = typer.Option(None, "--profile", help="The same as the PROFILE argument, as every "
                                              "other command takes it."),
        set_: List[str] = set_option(),
    ) -> None:
        """Print the fully resolved config of a profile (with overrides)."""
        from recipe.config import config_to_yaml, load_config
        if profile_arg and profile and profile_arg != profile:
            _fail(f"two profiles given ({profile_arg} and --profile {profile}): give one")
        with _user_errors():
            typer.echo(config_to_yaml(load_config(profile or profile_arg or "tiny", set_)))
