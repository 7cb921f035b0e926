"""``make docs``: run the cascade through the notebooks on the tiny profile, then render every executed notebook
(with its plots, embedded as images) to HTML, so a reader can see a full run without running one::

    python -m recipe.pipeline.docs_build [--run-id docs-tiny] [--out build/docs] [-s key=value ...]

The committed notebooks stay output-free; the executed copies live in the run folder, the HTML under ``--out``.
The report's heatmap is also written to ``docs/report_heatmap.png`` (committed: README shows it, so a reader sees
what the recipe produces before running it).
"""
from __future__ import annotations

import argparse
import html
from pathlib import Path

from recipe.runs.layout import PROJECT_ROOT, RunDir

HEATMAP_PNG = PROJECT_ROOT / "docs" / "report_heatmap.png"


def render_html(notebook: Path, out: Path) -> Path:
    """One executed notebook -> a standalone HTML page (images embedded as data URIs, no input prompts hidden)."""
    import nbformat
    from nbconvert import HTMLExporter
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(notebook, as_version=4))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body)
    return out


def executed_notebooks(run: RunDir) -> list[Path]:
    """The run's executed notebooks in run order (00_data, 01_sft, ..., 99_report)."""
    return sorted(run.path.glob("*/notebook.ipynb"))


def write_heatmap(run: RunDir, path: Path = HEATMAP_PNG) -> Path:
    """The report notebook's heatmap of ``run`` as the PNG the notebook shows (``plots.figure_png``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from recipe.pipeline import plots
    fig = plots.plot_heatmap(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(plots.figure_png(fig))
    plt.close(fig)
    return path


def build(run_id: str = "docs-tiny", out: Path = PROJECT_ROOT / "build" / "docs", overrides: list[str] = (),
          run: bool = True, heatmap: Path | None = HEATMAP_PNG) -> list[Path]:
    if run:
        from recipe.pipeline.runner import run_pipeline
        run_pipeline(profile="tiny", run_id=run_id, overrides=list(overrides), via_notebooks=True)
    rd = RunDir.for_id(run_id)
    pages = [render_html(nb, Path(out) / f"{nb.parent.name}.html") for nb in executed_notebooks(rd)]
    if not pages:
        raise FileNotFoundError(f"no executed notebooks in {rd.path}")
    shown = ""
    if heatmap is not None and rd.scores_path.exists():
        png = write_heatmap(rd, Path(heatmap))
        Path(out, png.name).write_bytes(png.read_bytes())
        shown = f'<p><img src="{html.escape(png.name)}" alt="checkpoint x domain heatmap"></p>'
    links = "\n".join(f'<li><a href="{p.name}">{html.escape(p.stem)}</a></li>' for p in pages)
    index = Path(out) / "index.html"
    index.write_text(f"<!doctype html><title>Run {html.escape(run_id)}</title><h1>Nemotron-Cascade 2 recipe: "
                     f"tiny run {html.escape(run_id)}</h1>{shown}<p>Every phase notebook, executed.</p>"
                     f"<ol>{links}</ol>")
    return [index, *pages]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-id", default="docs-tiny")
    ap.add_argument("--out", default=str(PROJECT_ROOT / "build" / "docs"))
    ap.add_argument("-s", "--set", dest="overrides", action="append", default=[])
    ap.add_argument("--no-run", action="store_true", help="render an existing run's notebooks only")
    ap.add_argument("--heatmap", default=str(HEATMAP_PNG), help="where the report heatmap PNG goes ('' for none)")
    a = ap.parse_args(argv)
    pages = build(a.run_id, Path(a.out), a.overrides, run=not a.no_run, heatmap=Path(a.heatmap) if a.heatmap else None)
    print(f"wrote {len(pages)} pages: {pages[0]}")


if __name__ == "__main__":
    main()
