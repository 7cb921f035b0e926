"""`make lab` saves the committed notebooks without outputs, so running them interactively never dirties the git
tree (outputs stay in the browser session; executed copies with outputs are written by `recipe run` / `make docs`
into the run folder). Wired as ``--ContentsManager.pre_save_hook=recipe.pipeline.lab_hooks.strip_outputs``."""
from __future__ import annotations


def strip_outputs(model: dict, **kwargs) -> None:
    """Jupyter pre-save hook: clear outputs and execution counts of every code cell of a notebook model."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    for cell in model["content"].get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
