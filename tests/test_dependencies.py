"""Every third-party package that recipe/ imports is a declared core dependency, and packages recipe/ never
imports live in the extras that use them (benchmarks, the lab)."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib


def _name(req: str) -> str:
    return re.split(r"[=<>!~\[ ]", req, maxsplit=1)[0].lower().replace("_", "-")


def _imported_top_modules(root) -> set[str]:
    mods: set[str] = set()
    for f in (root / "recipe").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods.add(node.module.split(".")[0])
    return mods - set(sys.stdlib_module_names) - {"recipe"}


def _checker_packages(root) -> set[str]:
    """The reference checkers installed --no-deps from requirements-checkers.txt (the Makefile's setup step)."""
    lines = (root / "requirements-checkers.txt").read_text().splitlines()
    return {_name(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()}


def test_every_import_of_recipe_is_declared(project_root):
    meta = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in meta["dependencies"]} | _checker_packages(project_root)
    dists = md.packages_distributions()
    missing = {}
    for mod in _imported_top_modules(project_root):
        names = {d.lower().replace("_", "-") for d in dists.get(mod, [mod])}
        if not names & core:
            missing[mod] = sorted(names)
    assert not missing, f"imported by recipe/ but not in [project].dependencies: {missing}"


def test_packages_recipe_never_imports_are_extras(project_root):
    meta = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in meta["dependencies"]}
    extras = {k: {_name(r) for r in v} for k, v in meta["optional-dependencies"].items()}
    imported = {d.lower().replace("_", "-") for m in _imported_top_modules(project_root)
                for d in md.packages_distributions().get(m, [m])}
    for pkg, extra in (("trl", "bench"), ("jupytext", "lab")):
        assert pkg not in imported and pkg not in core and pkg in extras[extra], pkg
    # never imported by recipe/, yet core: transformers' GGUF loader (`recipe model import`) requires it
    assert "accelerate" not in imported and "accelerate" in core
