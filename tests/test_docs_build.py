"""`make docs` renders a run's executed notebooks to standalone HTML with their plots: the newest run (or the one
named), a cascade only when there is none (said first), nothing written outside its output folder, pages that read
offline (formulas drawn in, no CDN script) and stderr text not styled as an error."""
from __future__ import annotations

import base64
import re

import nbformat
import pytest

from recipe.pipeline.docs_build import HEATMAP_PNG, build
from recipe.runs.layout import RunDir

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000"
    "1ff89993d1d0000000049454e44ae426082")).decode()


def test_executed_notebooks_render_to_html_with_images(tmp_path, monkeypatch):
    pytest.importorskip("nbconvert")
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    run = RunDir.for_id("d")
    for phase in ("00_data", "99_report"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {phase} title"),
                                             nbformat.v4.new_code_cell("nb.heatmap(run_id);", outputs=[
                                                 nbformat.v4.new_output("display_data", data={"image/png": PNG})])])
        (run.path / phase).mkdir(parents=True)
        nbformat.write(nb, run.path / phase / "notebook.ipynb")
    index, *pages = build("d", tmp_path / "html", run=False)
    assert [p.name for p in pages] == ["00_data.html", "99_report.html"]
    text = pages[1].read_text()
    assert "99_report title" in text and f"data:image/png;base64,{PNG}" in text
    assert 'href="00_data.html"' in index.read_text()


def _notebook(run: RunDir, phase: str, *outputs) -> None:
    (run.path / phase).mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {phase}"),
                                                   nbformat.v4.new_code_cell("x", outputs=list(outputs))]),
                   run.path / phase / "notebook.ipynb")


def test_pages_read_offline_and_stderr_is_not_an_error_box(tmp_path, monkeypatch):
    """The objective a phase notebook displays ($$...$$ markdown) is drawn into the page; no script comes from the
    network; a stderr stream (a warning) keeps its text but not the error styling."""
    pytest.importorskip("nbconvert")
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    run = RunDir.for_id("m")
    objective = r"$$\mathcal{L}(\theta)=-\frac{1}{N}\sum_i\log\pi_\theta(y_i\mid x_i)$$ and `$HOME` stays"
    _notebook(run, "01_sft", nbformat.v4.new_output("display_data", data={"text/markdown": objective}),
              nbformat.v4.new_output("stream", name="stderr", text="UserWarning: a harmless note\n"))
    _, page = build("m", tmp_path / "html", run=False)
    text = page.read_text()
    assert "$$" not in text and 'class="math"' in text and "data:image/svg+xml;base64," in text
    assert "\\frac{1}{N}" in text  # the TeX stays readable as the image's alt text
    assert "$HOME" in text  # a code span is not math
    # no script from the network (nbconvert's mermaid loader imports only for a page with diagrams)
    assert "libs/mathjax" not in text and not re.search(r'<script[^>]+src="https?://', text)
    assert "UserWarning: a harmless note" in text
    assert 'data-mime-type="application/vnd.jupyter.stderr"]{background:#f6f6f6' in text


def test_the_newest_run_is_rendered_and_a_cascade_runs_only_when_there_is_none(tmp_path, monkeypatch):
    pytest.importorskip("nbconvert")
    import os

    from recipe.pipeline import cascade_runner as runner
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    ran, said = [], []

    def fake_pipeline(*, profile, run_id, overrides, via_notebooks):  # what `make run` leaves: executed notebooks
        said.append("<cascade>")
        ran.append(run_id)
        _notebook(RunDir.for_id(run_id), "00_data")
        return RunDir.for_id(run_id)

    monkeypatch.setattr(runner, "run_pipeline", fake_pipeline)
    index, *_ = build(None, tmp_path / "html", say=said.append)  # no run at all: the cascade, announced first
    assert ran == ["tiny-seed0"] and said[0].startswith("make docs: no run under") and said[1] == "<cascade>"
    old, new = RunDir.for_id("old"), RunDir.for_id("new")
    _notebook(old, "00_data")
    _notebook(new, "00_data")
    os.utime(old.path / "00_data" / "notebook.ipynb", (1, 1))
    os.utime(RunDir.for_id("tiny-seed0").path / "00_data" / "notebook.ipynb", (2, 2))
    said.clear()
    index, *_ = build(None, tmp_path / "html", say=said.append)
    assert ran == ["tiny-seed0"] and "run new" in index.read_text()
    assert said == [f"make docs: rendering run new ({new.path})"]
    index, *_ = build("old", tmp_path / "html", say=said.append)  # RUN_ID=old
    assert ran == ["tiny-seed0"] and "run old" in index.read_text()


def test_build_writes_the_report_heatmap_png(tmp_path, monkeypatch):
    """The PNG README shows: the report's heatmap, with its axes, colour bar and teacher caption."""
    import json

    from PIL import Image
    pytest.importorskip("nbconvert")
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    run = RunDir.for_id("h")
    (run.path / "99_report").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# report")]),
                   run.path / "99_report" / "notebook.ipynb")
    run.scores_path.write_text(json.dumps({"checkpoints": {"sft": {"math": 10.0, "mcqa": 40.0},
                                                           "mopd": {"math": 30.0, "mcqa": 35.0}},
                                           "domains": ["math", "mcqa"]}))
    (run.path / "teachers.json").write_text(json.dumps({"best_so_far": {"math": {"stage": "mopd", "score": 30.0}}}))
    committed = HEATMAP_PNG.read_bytes() if HEATMAP_PNG.exists() else None
    index, *_ = build("h", tmp_path / "html", run=False)
    img = Image.open(tmp_path / "html" / "report_heatmap.png")
    panels = json.loads(img.info["recipe:axes"])
    assert panels[0]["xlabel"] and panels[0]["ylabel"] and any(p["colorbar"] and p["ylabel"] for p in panels)
    assert 'src="report_heatmap.png"' in index.read_text()
    assert (HEATMAP_PNG.read_bytes() if HEATMAP_PNG.exists() else None) == committed  # README's figure untouched


def test_build_without_executed_notebooks_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    with pytest.raises(FileNotFoundError, match="no executed notebooks"):
        build("none", tmp_path / "html", run=False)
    with pytest.raises(FileNotFoundError, match="`make run` makes one"):
        build(None, tmp_path / "html", run=False)
