"""``make docs``: render a run's executed notebooks (with their plots, embedded as images) to HTML, so a reader can see
a full run without running one::

    python -m recipe.pipeline.docs_build [--run-id ID] [--out build/docs] [--run] [-s key=value ...]

Without ``--run-id`` it renders the newest run that has executed notebooks (``make run``'s); only when there is none,
or ``--run`` is given, does it run the tiny cascade first, and it says so before starting. It writes under ``--out``
only (never a tracked file): the pages, an index and the report's heatmap. The pages read offline: formulas are drawn
into the page (``offline_math``) instead of by MathJax loaded from a CDN, and stderr text (warnings, progress) is shown
as plain output, not in the red box of an error.
"""
from __future__ import annotations

import argparse
import html
import re
from pathlib import Path

from recipe.runs.layout import PROJECT_ROOT, RunDir, runs_root

HEATMAP_PNG = PROJECT_ROOT / "docs" / "report_heatmap.png"  # README's figure; make docs writes its copy under --out


# stderr streams are not errors (a traceback is an "error" output): nbconvert's lab theme paints them red
_STDERR_CSS = ('<style>.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]{background:#f6f6f6;'
               'border-left:3px solid #bbb;color:inherit}</style>')
_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)  # a CDN script
_CDN_SCRIPT = re.compile(r'<script[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>')


def render_html(notebook: Path, out: Path) -> Path:
    """One executed notebook -> a standalone HTML page: images embedded as data URIs, formulas drawn in, nothing
    loaded from the network."""
    import nbformat
    from nbconvert import HTMLExporter

    from recipe.reporting.offline_math import render_notebook_math
    nb = nbformat.read(notebook, as_version=4)
    render_notebook_math(nb)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    body = _CDN_SCRIPT.sub("", _MATHJAX.sub("", body)).replace("</head>", _STDERR_CSS + "</head>", 1)
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

    from recipe.reporting import plots
    fig = plots.plot_heatmap(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(plots.figure_png(fig))
    plt.close(fig)
    return path


def newest_run() -> RunDir | None:
    """The run whose newest executed notebook is the most recent, or None when no run has one."""
    root = runs_root()
    stamped = [(max(nb.stat().st_mtime for nb in nbs), d) for d in (root.iterdir() if root.is_dir() else ())
               if (nbs := executed_notebooks(RunDir(d)))]
    return RunDir(max(stamped)[1]) if stamped else None


def build(run_id: str | None = None, out: Path = PROJECT_ROOT / "build" / "docs", overrides: list[str] = (),
          run: bool | None = None, say=print) -> list[Path]:
    """Render ``run_id`` (default: the newest run with executed notebooks) into ``out``. ``run``: True runs the tiny
    cascade first, False never does, None only when the run has no executed notebooks (saying so first)."""
    rd = RunDir.for_id(run_id) if run_id else newest_run()
    if run or (run is None and (rd is None or not executed_notebooks(rd))):
        from recipe.config import load_config
        from recipe.pipeline.cascade_runner import run_pipeline
        from recipe.runs.run_init import default_run_id
        target = rd.run_id if rd is not None else default_run_id(load_config("tiny", list(overrides)))
        why = "as asked (--run)" if run else f"no run under {runs_root()} has executed notebooks to render"
        say(f"make docs: {why}: running the tiny cascade through the notebooks first (run {target}, about 5-9 "
            "minutes on 2 CPU cores)")
        rd = run_pipeline(profile="tiny", run_id=target, overrides=list(overrides), via_notebooks=True)
    elif rd is None:
        raise FileNotFoundError(f"no run under {runs_root()} has executed notebooks; `make run` makes one")
    say(f"make docs: rendering run {rd.run_id} ({rd.path})")
    pages = [render_html(nb, Path(out) / f"{nb.parent.name}.html") for nb in executed_notebooks(rd)]
    if not pages:
        raise FileNotFoundError(f"no executed notebooks in {rd.path} (a run made with --no-notebooks has none); "
                                "`make docs RUN_ID=...` with a run made through the notebooks, or `make run`")
    shown = ""
    if rd.scores_path.exists():
        png = write_heatmap(rd, Path(out) / HEATMAP_PNG.name)
        shown = f'<p><img src="{html.escape(png.name)}" alt="checkpoint x domain heatmap"></p>'
    links = "\n".join(f'<li><a href="{p.name}">{html.escape(p.stem)}</a></li>' for p in pages)
    index = Path(out) / "index.html"
    index.write_text(f"<!doctype html><title>Run {html.escape(rd.run_id)}</title><h1>Nemotron-Cascade 2 recipe: "
                     f"run {html.escape(rd.run_id)}</h1>{shown}<p>Every phase notebook, executed.</p>"
                     f"<ol>{links}</ol>")
    return [index, *pages]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-id", default=None, help="the run to render (default: the newest with executed notebooks)")
    ap.add_argument("--out", default=str(PROJECT_ROOT / "build" / "docs"))
    ap.add_argument("-s", "--set", dest="overrides", action="append", default=[],
                    help="key=value override of a cascade run here")
    ap.add_argument("--run", action="store_true", help="run (or resume) the tiny cascade first even if the run exists")
    a = ap.parse_args(argv)
    try:
        pages = build(a.run_id or None, Path(a.out), a.overrides, run=True if a.run else None)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"error: {e}") from None
    print(f"wrote {len(pages)} pages: {pages[0]}")


if __name__ == "__main__":
    main()
