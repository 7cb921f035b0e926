"""`make docs` renders executed notebooks to standalone HTML with their plots."""
from __future__ import annotations

import base64

import nbformat
import pytest

from recipe.pipeline.docs_build import build
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
    index, *pages = build("d", tmp_path / "html", run=False, heatmap=None)
    assert [p.name for p in pages] == ["00_data.html", "99_report.html"]
    text = pages[1].read_text()
    assert "99_report title" in text and f"data:image/png;base64,{PNG}" in text
    assert 'href="00_data.html"' in index.read_text()


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
    index, *_ = build("h", tmp_path / "html", run=False, heatmap=tmp_path / "docs" / "report_heatmap.png")
    img = Image.open(tmp_path / "docs" / "report_heatmap.png")
    panels = json.loads(img.info["recipe:axes"])
    assert panels[0]["xlabel"] and panels[0]["ylabel"] and any(p["colorbar"] and p["ylabel"] for p in panels)
    written = (tmp_path / "docs" / "report_heatmap.png").read_bytes()
    assert (tmp_path / "html" / "report_heatmap.png").read_bytes() == written
    assert 'src="report_heatmap.png"' in index.read_text()


def test_build_without_executed_notebooks_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    with pytest.raises(FileNotFoundError, match="no executed notebooks"):
        build("none", tmp_path / "html", run=False)
