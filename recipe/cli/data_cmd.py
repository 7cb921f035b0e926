"""``recipe data``: curate training data and write dataset cards.

    recipe data curate --input FILE_OR_DIR... [--format auto|nemo_gym|messages|normalized]
                       [--decontaminate-against FILE...] --out DIR [--profile tiny|paper] [--backend inprocess|ray]
    recipe data card --report DIR_OR_REPORT_JSON [--out README.md] [--name NAME]
    recipe data card --released [--out-dir data_cards/released] [--profile paper]

``curate`` calls :func:`recipe.data.curate.curate`, the same function the data notebook calls, and prints
the count table; the exit code is 0 when the counts reconcile (quarantined rows are reported, not errors). The
evaluation set is read through the evaluation suites (``recipe.eval.decontam_items.eval_set``): the profile's
``data.decontam.benchmarks`` (paper: every benchmark it evaluates), its ``eval_files`` and each
``--decontaminate-against`` (``BENCHMARK=PATH``, or ``PATH`` whose benchmark is recognised by its fields).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(help="Curate released and tiny data; write data cards.", no_args_is_help=True)


def _data_section(profile: str, overrides: list[str]):
    from recipe.config import load_config
    return load_config(profile, overrides=overrides).data


@app.command()
def curate(
    input: List[Path] = typer.Option(..., "--input", "-i", help="JSONL file or directory (Hub-layout or plain); repeatable."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory (records/, nemo_gym/, sft/, pools/, report.json)."),
    format: str = typer.Option("auto", "--format", help="Row format: auto, nemo_gym, messages or normalized."),
    decontaminate_against: List[str] = typer.Option([], "--decontaminate-against", "-d",
                                                     help="Evaluation file, BENCHMARK=PATH or PATH "
                                                          "(JSONL/JSON/CSV/Parquet/txt); repeatable."),
    profile: str = typer.Option("tiny", "--profile", help="Config profile whose `data` section is used."),
    set_: List[str] = typer.Option([], "--set", "-s", help="Config override, e.g. data.dedup.threshold=0.9; repeatable."),
    backend: Optional[str] = typer.Option(None, "--backend", help="inprocess or ray (default: data.backend)."),
) -> None:
    """Normalize, quarantine, decontaminate, deduplicate, split and write INPUTs to OUT."""
    from recipe.config import load_config
    from recipe.data.curate import curate as run_curate
    from recipe.data.curation_report_views import report_table
    from recipe.eval.decontam_items import eval_set

    try:
        cfg = load_config(profile, overrides=list(set_))
        evals = eval_set(cfg, decontaminate_against)
        rep = run_curate(input, out, fmt=format, config=cfg.data, backend=backend, progress=True, eval_set=evals)
    except ValueError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    typer.echo(report_table(rep).to_string())
    if rep.quarantined:
        typer.echo(f"{rep.quarantined} rows quarantined (reasons: {rep.quarantined_by_reason}); "
                   f"see {out / 'quarantine.jsonl'}")
    typer.echo(f"report: {out / 'report.json'}  card: {out / 'README.md'}  reconciles: {rep.reconciles}")
    for b in rep.decontamination.get("benchmarks", []):
        typer.echo(f"decontamination: {b['benchmark']}: {b['items']} items, {b['rows_removed']} rows removed")
    # per-stage layout the cluster renderer reads (<data_root>/<stage>/{train,validation}.jsonl; SFT: sft/)
    from recipe.data.stage_layout import write_stage_layout

    counts = write_stage_layout(out, cfg)
    filled = {k: v for k, v in counts.items() if v["train"] or v["validation"]}
    typer.echo(f"stage layout (cluster.data_root={out}): sft/ + " +
               (", ".join(f"{k}: {v['train']}/{v['validation']}" for k, v in filled.items()) or "no RL prompts"))


@app.command()
def card(
    report: Optional[Path] = typer.Option(None, "--report", help="report.json or a curation output directory."),
    out: Optional[Path] = typer.Option(None, "--out", help="Card path (default: README.md beside the report)."),
    name: Optional[str] = typer.Option(None, "--name", help="Dataset name in the card (default: output dir name)."),
    released: bool = typer.Option(False, "--released", help="Write cards for the NVIDIA releases we consume."),
    out_dir: Path = typer.Option(Path("data_cards/released"), "--out-dir", help="Where --released cards go."),
    profile: str = typer.Option("paper", "--profile", help="Profile whose pinned revisions go into --released cards."),
) -> None:
    """Write a Hugging Face dataset card from a curation report, or the cards of the released datasets."""
    from recipe.data.dataset_cards import write_curated_card, write_released_cards
    from recipe.data.curate import CurationReport

    if released:
        for p in write_released_cards(_data_section(profile, []), out_dir):
            typer.echo(f"wrote {p}")
        return
    if report is None:
        typer.echo("error: pass --report DIR_OR_REPORT_JSON, or --released", err=True)
        raise typer.Exit(2)
    rep_path = report / "report.json" if report.is_dir() else report
    if not rep_path.is_file():
        typer.echo(f"error: {rep_path} not found; run `recipe data curate ... --out DIR` first", err=True)
        raise typer.Exit(2)
    rep = CurationReport.load(rep_path)
    target = out or rep_path.parent / "README.md"
    write_curated_card(rep, target, name=name or rep_path.parent.name)
    typer.echo(f"wrote {target}")
