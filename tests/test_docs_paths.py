"""Every path README.md and docs/ point at exists: their links, and the repository paths they name in code spans
(`recipe/...`, `benchmarks/...`, `notebooks/...`, `tests/...`), so a move of a file cannot leave a page behind."""
from __future__ import annotations

import re

import pytest

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE_PATH = re.compile(r"`((?:recipe|benchmarks|notebooks|tests)/[\w./*-]*[\w*])")
# paths of other repositories that the pages cite by name
ELSEWHERE = {"tests/check_metrics.py": "NeMo-RL's metric checker, cited in NEMO_RL.md"}


def _pages(project_root):
    return [project_root / "README.md", *sorted((project_root / "docs").glob("*.md"))]


def _missing(project_root):
    out = []
    for page in _pages(project_root):
        text = page.read_text(encoding="utf-8")
        for target in LINK.findall(text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                out.append(f"{page.name}: link {target}")
        for path in CODE_PATH.findall(text):
            if any(c in path for c in "*<>{}") or path in ELSEWHERE:
                continue
            if not (project_root / path).exists():
                out.append(f"{page.name}: `{path}`")
    return out


def test_every_documented_path_exists(project_root):
    assert _missing(project_root) == []


def test_the_check_sees_a_moved_file(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("see [the page](docs/GONE.md) and `recipe/gone.py`\n")
    assert sorted(_missing(tmp_path)) == ["README.md: `recipe/gone.py`", "README.md: link docs/GONE.md"]


@pytest.mark.parametrize("page", ["README.md"])
def test_where_things_are_names_files_that_exist(project_root, page):
    text = (project_root / page).read_text(encoding="utf-8")
    table = text[text.index("## Where things are"):].split("\n## ", 1)[0]
    paths = CODE_PATH.findall(table)
    assert paths and all((project_root / p).exists() for p in paths), paths
