"""``recipe hub download`` and ``recipe hub publish`` (DESIGN.md §1, §7; logic in ``recipe/hub/``).

Exit codes: 0 done (or nothing to do), 2 a usage/config problem or a Hub error (the message says what to
change), 3 the Hub cannot be reached. Tokens are never accepted as options: log in with
``hf auth login`` or export ``HF_TOKEN``.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from recipe.cli.user_errors import fail, hub_errors

app = typer.Typer(help="Download NVIDIA's released model/data; publish a run's stages with their lineage.",
                  no_args_is_help=True)
console = Console(stderr=True)
ARTIFACTS = ("released-model", "sft-data", "rl-data")


_fail = partial(fail, console)


def _config(profile: str, overrides: list[str]):
    from recipe.config import ConfigError, load_config

    try:
        return load_config(profile, overrides=overrides)
    except ConfigError as e:
        _fail(str(e))


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@app.command("download")
def download(
    artifact: str = typer.Argument(..., help="released-model | sft-data | rl-data"),
    subset: List[str] = typer.Option([], "--subset", help="Subset (data config, or model 'config'/'weights'); "
                                                          "repeatable. Default: hub.<artifact>.default_subsets."),
    revision: Optional[str] = typer.Option(None, help="Branch, tag or commit (default: hub.<artifact>.revision, "
                                                      "else the data section's pin, else main)."),
    local_dir: Optional[Path] = typer.Option(None, help="Target folder (default: <hub.download_dir>/<ORG>/<NAME>)."),
    profile: str = typer.Option("tiny", help="Profile whose hub section to use (tiny|paper|path)."),
    set_: List[str] = typer.Option([], "--set", "-s", help="Config override key=value, e.g. hub.rl_data.revision=SHA."),
    allow_unsafe_files: bool = typer.Option(False, "--allow-unsafe-files",
                                            help="Also fetch pickle weights and code files (off: never run "
                                                 "repository code or unpickle)."),
    as_json: bool = typer.Option(False, "--json", help="Print the download manifest as JSON on stdout."),
) -> None:
    """Download a released artifact with snapshot_download; write download_manifest.json beside it."""
    from recipe.hub.download import MANIFEST_NAME, configured_revision, download_artifact

    if artifact not in ARTIFACTS:
        _fail(f"unknown artifact {artifact!r}: choose one of {', '.join(ARTIFACTS)}")
    cfg = _config(profile, set_)
    section = cfg.hub
    with hub_errors(console):
        manifest = download_artifact(section, artifact, subsets=subset or None,
                                     revision=revision or configured_revision(cfg, artifact),
                                     local_dir=local_dir, allow_unsafe=allow_unsafe_files)
    if as_json:
        print(json.dumps(manifest, indent=2))
        return
    target = local_dir or Path(section.download_dir) / manifest["repo_id"]
    console.print(f"[green]downloaded[/] {manifest['repo_id']} @ {manifest['resolved_commit']} "
                  f"(requested {manifest['requested_revision']!r}) subsets={manifest['subsets']}: "
                  f"{len(manifest['files'])} files, {_size(manifest['total_bytes'])} -> {target}")
    console.print(f"manifest: {target / MANIFEST_NAME}")


@app.command("publish")
def publish(
    run_id: str = typer.Option(..., help="Run id under runs/ (RECIPE_RUNS_DIR)."),
    stage: str = typer.Option(..., help="Stage whose checkpoint to publish; also the branch name. 'all': every "
                                        "stage the run has done, each to its own branch."),
    repo: str = typer.Option(..., help="Model repo ORG/NAME (one repo per run)."),
    private: Optional[bool] = typer.Option(None, "--private/--public", help="Visibility of a new repo "
                                                                            "(default: hub.publish.private)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be uploaded and where; write nothing."),
    force: bool = typer.Option(False, "--force", help="Replace different content already on the stage's branch."),
    data_dir: List[Path] = typer.Option([], "--data-dir", help="Curated data folder to publish too (repeatable)."),
    data_repo: Optional[str] = typer.Option(None, help="Dataset repo for --data-dir (default: <repo>-data)."),
    data_card: Optional[Path] = typer.Option(None, help="Data card for --data-dir (default: DIR/README.md or "
                                                        "data_cards/<DIR name>.md)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Push a done stage's checkpoint + generated model card to branch STAGE of REPO (idempotent)."""
    from recipe.config import STAGE_PLAN, ConfigError, load_config
    from recipe.hub.publish import publish_dataset, publish_stage
    from recipe.runs.layout import RunDir

    if stage != "all" and stage not in STAGE_PLAN:
        _fail(f"unknown stage {stage!r}: the plan is {', '.join(STAGE_PLAN)} (or 'all')")
    if repo.count("/") != 1:
        _fail(f"--repo {repo!r} must be ORG/NAME")
    try:
        run = RunDir.for_id(run_id)
        run.read_run_json()
        cfg = load_config(run.config_path if run.config_path.exists() else "tiny")
    except (ValueError, FileNotFoundError, ConfigError) as e:
        _fail(str(e))
    pub = cfg.hub.publish
    private = pub.private if private is None else private
    stages = run.done_stages() if stage == "all" else [stage]
    if not stages:
        _fail(f"run {run_id!r} has no done stage to publish")
    results = []
    with hub_errors(console):
        for s in stages:
            results.append(publish_stage(run, s, repo, license=pub.license, private=private, force=force,
                                         dry_run=dry_run))
        for d in data_dir:
            results.append(publish_dataset(d, data_repo or f"{repo}-data", card=data_card,
                                           branch=pub.dataset_branch, private=private, force=force,
                                           dry_run=dry_run))
    if as_json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        _print_result(r)


def _print_result(r: dict) -> None:
    where = f"{r['endpoint']}/{'datasets/' if r['repo_type'] == 'dataset' else ''}{r['repo_id']} @ branch {r['branch']}"
    if r["action"] == "dry-run":
        table = Table(title=f"dry run: would upload to {where} (remote: {r['remote_state']})")
        for col in ("path in repo", "size", "source", "change"):
            table.add_column(col)
        for f in r["files"]:
            table.add_row(f["path"], _size(f["size"]), f["source"],
                          "changed" if f["path"] in r["changed"] else "same")
        for p in r["removed"]:
            table.add_row(p, "", "", "would be deleted (needs --force)")
        console.print(table)
        if r.get("note"):
            console.print(r["note"])
    elif r["action"] == "unchanged":
        console.print(f"[green]unchanged[/] {where}: already at commit {r['commit']} with identical files")
    else:
        console.print(f"[green]{r['action']}[/] {where}: commit {r['commit']} ({len(r['files'])} files)")
