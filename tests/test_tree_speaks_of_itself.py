"""The tracked tree speaks of the project, not of its tracker or its development rounds, and a user's clone never
depends on the development machines' reference folder: comments cite the paper, NeMo-RL or the repository's own
docs/ (docs/RECIPE.md, docs/EVAL.md, docs/NEMO_RL.md, docs/DESIGN.md)."""
from __future__ import annotations

import re
import subprocess

import pytest

TRACKER = re.compile(r"(?<![-\w])(?:issues?|items?) #?\d+|\b(?:this|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|"
                     r"tenth|eleventh|twelfth|thirteenth|last) session\b|\bsession \d+\b", re.IGNORECASE)
SHARED = re.compile(r"\.\./shared\b|shared/docs/")
TEXT = (".py", ".md", ".ipynb", ".yaml", ".yml", ".toml", ".sh", ".txt", ".json", "Makefile", "Dockerfile")


def _tracked(project_root, *folders):
    try:
        out = subprocess.run(["git", "ls-files", "--", *folders], cwd=project_root, capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked tree cannot be listed")
    return [project_root / p for p in out.splitlines() if p.endswith(TEXT)]


def _hits(paths, pattern, project_root):
    return [f"{p.relative_to(project_root)}:{i}: {line.strip()[:120]}"
            for p in paths if p.is_file()
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if pattern.search(line)]


def test_no_tracker_items_or_work_rounds(project_root):
    paths = _tracked(project_root, "recipe", "notebooks", "tests", "docs", "benchmarks", "containers", "data_cards",
                     "README.md", "Makefile", "pyproject.toml", "environment.yml")
    paths = [p for p in paths if p.name != "test_tree_speaks_of_itself.py"]
    assert _hits(paths, TRACKER, project_root) == []


def test_the_product_never_cites_the_development_reference_folder(project_root):
    """Tests may read ../shared (and skip without it); what a user runs or reads may not depend on it."""
    paths = _tracked(project_root, "recipe", "notebooks", "docs", "containers", "data_cards", "README.md", "Makefile",
                     "pyproject.toml", "environment.yml")
    assert _hits(paths, SHARED, project_root) == []
