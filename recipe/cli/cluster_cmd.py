"""``recipe cluster lock|render|submit|status``: NeMo-RL on Slurm from the same config (docs/RUN_AT_SCALE.md).

Rendering is a dry run; only ``submit --submit`` calls ``sbatch``. Every command prints what it wrote.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from recipe.cli.user_errors import fail

console = Console()
app = typer.Typer(help="Render, submit and monitor NeMo-RL jobs on Slurm (pinned container, same config).",
                  no_args_is_help=True, pretty_exceptions_enable=False)

_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, KeyError, RuntimeError)


_fail = partial(fail, console)


def _render(profile: Optional[str], stage: str, run_id: str, out: Optional[Path], allow_unpinned: bool,
            allow_dirty: bool, set_: list[str], input_model: Optional[str] = None, defer_teachers: bool = False):
    from recipe.cluster import cluster_notebook_api

    return cluster_notebook_api.render_stage(run_id, stage, allow_unpinned=allow_unpinned, allow_dirty=allow_dirty,
                                     profile=profile, overrides=tuple(set_), out=out, input_model=input_model,
                                     defer_teachers=defer_teachers)


@app.command("lock")
def lock(
    tool: Optional[str] = typer.Option(None, help="skopeo | docker | enroot (default: the first one installed)."),
    nemo_rl_dir: Optional[Path] = typer.Option(None, help="NeMo-RL clone at the pinned tag: records submodule SHAs."),
    fingerprint: Optional[str] = typer.Option(None, help="Container fingerprint (cat /opt/nemo_rl_container_fingerprint)."),
    fingerprint_from_image: bool = typer.Option(False, "--fingerprint-from-image",
                                                help="Read the fingerprint by running the image (docker)."),
    lock_file: Path = typer.Option(Path("containers/nemo-rl.lock.json"), help="Lock file to update."),
    skip_digest: bool = typer.Option(False, "--skip-digest",
                                     help="Do not query the registry (only record SHAs / fingerprint)."),
) -> None:
    """Resolve the release image's digest (registry) and record it, the submodule SHAs and the fingerprint."""
    from recipe.cluster import lock as L

    try:
        cur = L.read_lock(lock_file)
        digest = used = None
        if not skip_digest:
            digest, used = L.resolve_digest(cur.image, cur.tag, tool=tool)
            console.print(f"{cur.image}:{cur.tag} -> {digest} (via {used})")
        subs = L.submodule_shas(nemo_rl_dir) if nemo_rl_dir else None
        new = L.update_lock(lock_file, digest=digest, tool=used, submodules=subs, fingerprint=fingerprint)
        if fingerprint_from_image:
            fp = L.fingerprint_from_image(new, tool or "docker")
            new = L.update_lock(lock_file, fingerprint=fp)
        console.print(f"wrote {lock_file}: digest={new.digest} fingerprint={new.container_fingerprint}")
    except _ERRORS as e:
        _fail(str(e))


@app.command("render")
def render(
    stage: str = typer.Option(..., help="Stage of the plan (sft, if_rl, ..., swe_rl) or 'all' for the cascade."),
    run_id: str = typer.Option(..., help="Run id: files go to runs/<id>/<NN>_<stage>/cluster/."),
    profile: Optional[str] = typer.Option(None, help="Profile (default: the run's config.yaml, else paper)."),
    out: Optional[Path] = typer.Option(None, help="Write the job files here instead of the run's stage dir."),
    allow_unpinned: bool = typer.Option(False, "--allow-unpinned",
                                        help="Render although the lock has no image digest (recorded)."),
    allow_dirty: bool = typer.Option(False, "--allow-dirty",
                                     help="Render from a git tree with uncommitted changes (recorded)."),
    set_: List[str] = typer.Option([], "--set", "-s", help="Config override key=value (repeatable)."),
    input_model: Optional[str] = typer.Option(None, help="Start from this HF checkpoint instead of the previous "
                                                          "stage's (e.g. the RLHF teacher branch from SFT)."),
    diff: bool = typer.Option(False, "--diff", help="Print our keys vs the NeMo-RL release defaults."),
    check: bool = typer.Option(False, "--check",
                               help="Validate against a NeMo-RL checkout ($RECIPE_NEMO_RL_DIR or /opt/nemo-rl): "
                                    "keys exist, defaults inheritance loads, values survive the merge; and the "
                                    "start-up rules of the Gym servers and NeMo-RL entry points."),
    explain: bool = typer.Option(False, "--explain",
                                 help="Print per job: nodes/GPUs by role, entry script, container, mounts, "
                                      "environment, segments and expected wall time, log locations."),
) -> None:
    """Write the NeMo-RL YAML, launch.sh (sbatch around ray.sub), convert.sh and provenance. Submits nothing.
    With --stage all, MOPD's teachers are links the chain's teacher-selection job fills (as `submit --stage all`)."""
    from recipe.cluster import cluster_notebook_api
    from recipe.config import STAGE_PLAN, ConfigError

    stages = list(STAGE_PLAN) if stage == "all" else [stage]
    try:
        for s in stages:
            res = _render(profile, s, run_id, out / s if (out and stage == "all") else out, allow_unpinned,
                          allow_dirty, set_, input_model, defer_teachers=(stage == "all" and s == "mopd"))
            for w in res.warnings:
                console.print(f"[yellow]warning:[/] {w}")
            for f in res.files:
                console.print(f"wrote {f}")
            if diff:
                console.print(cluster_notebook_api.config_diff(res), markup=False)
            if explain:
                from recipe.cluster.explain import explain as explain_text
                from recipe.runs.layout import RunDir

                typer.echo(explain_text(cluster_notebook_api.load_run_config(RunDir.for_id(run_id), profile, tuple(set_)), res))
            if check:
                from recipe.cluster.release import ReleaseTree
                from recipe.cluster.config_checks import check_render

                tree = ReleaseTree.find()
                if tree is None:
                    _fail("--check needs NeMo-RL's configs: export RECIPE_NEMO_RL_DIR=<clone at v0.7.0>")
                from recipe.cluster.startup import check_jobs

                problems = check_render(res.jobs, tree) + check_jobs(res.jobs)
                for p in problems:
                    console.print(f"[red]invalid:[/] {p}", markup=True)
                if problems:
                    raise typer.Exit(1)
                console.print(f"{s}: valid against {tree.root}, NeMo-Gym's parser rules and the start-up rules")
    except typer.Exit:   # click's Exit is a RuntimeError: keep --check's own exit status
        raise
    except (*_ERRORS, ConfigError) as e:
        _fail(str(e))


@app.command("submit")
def submit(
    stage: str = typer.Option(..., help="A stage, or 'all' for the cascade as one afterok dependency chain."),
    run_id: str = typer.Option(..., help="Run id: the jobs render into runs/<id>/<NN>_<stage>/cluster/."),
    profile: Optional[str] = typer.Option(None, help="Profile (default: the run's config.yaml, else paper)."),
    allow_unpinned: bool = typer.Option(False, "--allow-unpinned",
                                        help="Submit although the lock has no image digest (recorded)."),
    allow_dirty: bool = typer.Option(False, "--allow-dirty",
                                     help="Submit from a git tree with uncommitted changes (recorded)."),
    set_: List[str] = typer.Option([], "--set", "-s", help="Config override key=value (repeatable)."),
    input_model: Optional[str] = typer.Option(None, help="Start from this HF checkpoint (see render)."),
    from_stage: Optional[str] = typer.Option(None, "--from", help="--stage all: first stage of the chain."),
    until: Optional[str] = typer.Option(None, "--until", help="--stage all: last stage of the chain."),
    segments: Optional[int] = typer.Option(None, help="--stage all: segments per stage (singleton-chained); default: "
                                                       "each stage's steps x its estimated step time."),
    do_submit: bool = typer.Option(False, "--submit", help="Actually call sbatch (default: print the commands)."),
) -> None:
    """Render the stage, then submit its launch script(s) only with --submit. ``--stage all`` (or --from/--until)
    submits the cascade as one afterok chain with teacher selection as its own job before MOPD; stages already done
    are skipped (resume after the last finished stage)."""
    from recipe.cluster import cluster_notebook_api
    from recipe.config import ConfigError

    try:
        if stage == "all" or from_stage or until:
            from recipe.cluster.chain import chain_stages, submit_chain
            from recipe.cluster.cluster_notebook_api import load_run_config
            from recipe.runs.layout import RunDir

            if stage != "all":
                _fail("--from/--until go with --stage all")
            run = RunDir.for_id(run_id)
            run.path.mkdir(parents=True, exist_ok=True)
            cfg = load_run_config(run, profile, tuple(set_))
            if not do_submit:
                todo = chain_stages(run, from_stage=from_stage, until=until)
                if not todo:
                    console.print(f"dry run: nothing to submit, every stage of the range is done in run {run_id}")
                    return
                _chain_dry_run(cfg, run, from_stage=from_stage, until=until, segments=segments,
                               profile=profile or cfg.profile, overrides=list(set_),
                               render_kw={"allow_unpinned": allow_unpinned, "allow_dirty": allow_dirty})
                return
            jobs = submit_chain(cfg, run, from_stage=from_stage, until=until, segments=segments,
                                profile=profile or cfg.profile, overrides=list(set_),
                                render_kw={"allow_unpinned": allow_unpinned, "allow_dirty": allow_dirty})
            for j in jobs:
                console.print(f"submitted {j['job']}: {', '.join(j['job_ids'])}"
                              + (f" (after {j['dependency']})" if j["dependency"] else ""))
            return
        res = _render(profile, stage, run_id, None, allow_unpinned, allow_dirty, set_, input_model)
        cmds = cluster_notebook_api.submit(res, submit=do_submit)
        for c in cmds:
            console.print(("submitted: " if do_submit else "dry run (add --submit): ") + c)
    except typer.Exit:   # click's Exit is a RuntimeError: keep the dry run's own exit status
        raise
    except (*_ERRORS, ConfigError) as e:
        _fail(str(e))


def _chain_dry_run(cfg, run, *, from_stage, until, segments: Optional[int], profile: str, overrides: list[str],
                   render_kw: dict) -> None:
    """Render and validate every job of the chain, print the sbatch lines in order; exit 1 if any is refused."""
    from recipe.cluster.chain import plan_chain
    from recipe.cluster.gym_refs import GymConfigs
    from recipe.cluster.release import ReleaseTree

    tree = ReleaseTree.find()
    gym = GymConfigs.find()
    plan = plan_chain(cfg, run, from_stage=from_stage, until=until, profile=profile, render_kw=render_kw,
                      overrides=overrides, tree=tree, gym=gym)
    echo = typer.echo   # plain output: sbatch lines must not be wrapped or read as markup
    echo(f"dry run of the chain for run {run.run_id} ({len(plan)} jobs; add --submit to submit). Job ids are shown "
         f"as $JOB_<job> (a training job's is its conversion job's, the last it submits); each launch script runs its "
         f"sbatch line once per segment (SEGMENTS"
         + (f"={segments} for every stage)." if segments else ", per stage below)."))
    echo(f"Gym configs from {gym.describe()}")
    if tree is None:
        echo("NOT CHECKED: NeMo-RL's MasterConfig rules (keys, inheritance, v0.7.0 types) need the release's configs: "
             "export RECIPE_NEMO_RL_DIR=<NeMo-RL clone at v0.7.0> (inside the image: /opt/nemo-rl)")
    for i, job in enumerate(plan, 1):
        verdict = "REFUSED" if job.problems else "ok"
        echo(f"[{i}/{len(plan)}] {job.stage}/{job.job}: {verdict}"
             + (f" (checked: {'; '.join(job.checked)})" if job.checked else ""))
        if job.segments:
            echo(f"  {job.segments}")
        if job.launch:
            echo(f"  {job.launch}")
        if job.sbatch:
            echo(f"  {job.var}=$({job.sbatch})")
        if job.convert:
            echo(f"  then the conversion job, which the next job waits for: {job.convert}")
        for p in job.problems:
            echo(f"  refused: {p}")
    refused = [j.job for j in plan if j.problems]
    if refused:
        echo(f"{len(refused)} of {len(plan)} jobs would be refused: {', '.join(refused)}")
        raise typer.Exit(1)
    echo(f"all {len(plan)} jobs rendered and valid")


@app.command("select-teachers")
def select_teachers_cmd(
    run_id: str = typer.Option(..., help="Run id whose finished stages are the candidate teachers."),
    profile: Optional[str] = typer.Option(None, help="Profile (default: the run's config.yaml, else paper)."),
    set_: List[str] = typer.Option([], "--set", "-s", help="Config override key=value (repeatable)."),
) -> None:
    """The chain's teacher-selection job: read the finished stages (checkpoints, TensorBoard validation), resolve
    MOPD's routing slots and point <mopd>/teachers/<slot> at the chosen checkpoints."""
    from recipe.cluster.chain import select_teachers
    from recipe.config import ConfigError
    from recipe.cluster.cluster_notebook_api import load_run_config
    from recipe.runs.layout import RunDir

    try:
        run = RunDir.for_id(run_id)
        res = select_teachers(load_run_config(run, profile, tuple(set_)), run)
        for agent, t in res["teachers"].items():
            console.print(f"{agent}: {t['slot']} -> {t['checkpoint']}")
    except (*_ERRORS, ConfigError) as e:
        _fail(str(e))


@app.command("status")
def status(
    run_id: str = typer.Option(..., help="Run id whose rendered cluster stages are read."),
    stage: Optional[str] = typer.Option(None, help="One stage (default: every rendered stage)."),
) -> None:
    """Read NeMo-RL checkpoints + TensorBoard logs into manifest.json / metrics.jsonl / validation.json."""
    from recipe.cluster.status import collect
    from recipe.config import STAGE_PLAN
    from recipe.runs.layout import RunDir

    run = RunDir.for_id(run_id)
    stages = [stage] if stage else [s for s in STAGE_PLAN if (run.read_manifest(s) or {}).get("cluster")]
    if not stages:
        _fail(f"run {run_id!r} has no rendered cluster stage ({run.path})")
    try:
        for s in stages:
            m = collect(run, s)
            prog = ", ".join(f"{j}: step {p['latest_checkpoint_step']}/{p['max_steps']}"
                             for j, p in m.get("progress", {}).items())
            console.print(f"{s}: {m['status']} ({prog})")
    except _ERRORS as e:
        _fail(str(e))
