"""Opening, running and saving a committed notebook in JupyterLab is a no-op for git.

`make lab` wires :func:`strip_outputs` as ``--ContentsManager.pre_save_hook``. JupyterLab's save writes the model
with ``nbformat.write`` (sorted keys, indent 1, one string per source line, a final newline); before that the hook
puts the model into the commit format: no outputs, no execution counts, the notebook metadata reduced to the one
kernelspec and ``language_info`` below (a running kernel adds its display name ``"Python 3 (ipykernel)"`` and its
exact Python version), and cell metadata reduced to the keys a person sets on purpose (``tags``: papermill's
``parameters`` cell). The committed files are in this same format (:func:`normalize_files`; a test checks it), so a
save changes the file only where a cell's source was edited. Executed copies with outputs are written by
`recipe run` / `make docs` into the run folder, never beside the committed notebooks.

    python -m recipe.pipeline.lab_hooks notebooks/*.ipynb     # rewrite files into the commit format
    python -m recipe.pipeline.lab_hooks --check notebooks/*.ipynb
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}
CELL_METADATA_KEPT = ("tags",)


def normalize_notebook(nb: dict) -> dict:
    """Put a notebook (a dict or an ``nbformat.NotebookNode``) into the commit format, in place; returns it."""
    nb["metadata"] = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata") or {}
        cell["metadata"] = {k: meta[k] for k in CELL_METADATA_KEPT if meta.get(k)}
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            if cell.get("cell_type") == "markdown" and not cell.get("attachments"):
                cell.pop("attachments", None)
    return nb


def strip_outputs(model: dict, **kwargs) -> None:
    """Jupyter pre-save hook: a notebook model into the commit format (:func:`normalize_notebook`); other files
    (``type`` other than ``notebook``) pass unchanged."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    normalize_notebook(model["content"])


def committed_text(path: Path) -> str:
    """What JupyterLab's save through the hook writes for the notebook at ``path``: the bytes to commit."""
    import nbformat
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    return nbformat.writes(normalize_notebook(nb), version=nbformat.NO_CONVERT) + "\n"  # nbformat.write adds "\n"


def normalize_files(paths: list[Path], check: bool = False) -> list[Path]:
    """Rewrite (or, with ``check``, only list) the notebooks that are not in the commit format."""
    changed = []
    for p in map(Path, paths):
        text = committed_text(p)
        if p.read_text(encoding="utf-8") != text:
            changed.append(p)
            if not check:
                p.write_text(text, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Put notebooks into the commit format JupyterLab's save hook writes.")
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--check", action="store_true", help="list files not in the format; exit 1 if any")
    a = ap.parse_args(argv)
    changed = normalize_files(a.paths, check=a.check)
    for p in changed:
        print(("not in the commit format: " if a.check else "normalized: ") + str(p))
    return 1 if (a.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
