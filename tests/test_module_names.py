"""A module's file name says what it holds without its folder: no two modules under ``recipe/`` share one, apart
from the package files and the names listed here with a reason (docs/ARCHITECTURE.md, "Names")."""
from __future__ import annotations

from collections import defaultdict

# package plumbing; every package has one, and the folder is what names it
SHARED_ON_PURPOSE = {"__init__.py": "a package's own file", "__main__.py": "a package's `python -m` entry point"}


def test_no_two_modules_share_a_file_name(project_root):
    where: dict[str, list[str]] = defaultdict(list)
    for p in sorted((project_root / "recipe").rglob("*.py")):
        if "__pycache__" not in p.parts:
            where[p.name].append(str(p.relative_to(project_root)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1 and name not in SHARED_ON_PURPOSE}
    assert not shared, f"file names used by more than one module (rename one, or list it with a reason): {shared}"


def test_the_check_sees_a_shared_name(tmp_path):
    """The rule fails where it should: two modules named alike in different packages."""
    for pkg in ("a", "b"):
        (tmp_path / "recipe" / pkg).mkdir(parents=True)
        (tmp_path / "recipe" / pkg / "validate.py").write_text("")
    try:
        test_no_two_modules_share_a_file_name(tmp_path)
    except AssertionError as e:
        assert "validate.py" in str(e)
    else:
        raise AssertionError("two modules named validate.py were not reported")
