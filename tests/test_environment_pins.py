"""environment.yml carries exactly the pins of pyproject.toml (one source of truth, checked)."""
from __future__ import annotations

import tomllib

import yaml


def test_conda_env_matches_pyproject(project_root):
    meta = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    pins = set(meta["dependencies"]) | {p for group in meta["optional-dependencies"].values() for p in group}
    env = yaml.safe_load((project_root / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert set(pip) == pins
    assert all("==" in p for p in pins), "every dependency is pinned"
    assert "python=3.11" in env["dependencies"]


def test_make_test_shuffles_with_the_pinned_random_order_plugin(project_root):
    import re
    make = (project_root / "Makefile").read_text()
    line = next(x for x in make.splitlines() if re.match(r"PYTEST := \$\(PY\) -m pytest", x))
    assert re.search(r"^test:.*\n(\t.*\n)*\t.*\$\(PYTEST\)", make, re.M), "make test runs $(PYTEST)"
    assert "-p random_order" in line and "--random-order-bucket=global" in line, line
    dev = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    env = yaml.safe_load((project_root / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    pin = next(p for p in dev if p.startswith("pytest-random-order=="))
    assert pin in pip
    from importlib.metadata import version
    assert pin == f"pytest-random-order=={version('pytest-random-order')}", "installed version differs from the pin"


def test_pyproject_installs_without_deprecation_noise(project_root):
    """setuptools >= 77 warns on every install about a license table; the SPDX string is the current form. A
    dependency listed twice is noise too (and two pins of one package can drift apart)."""
    meta = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    assert isinstance(meta["license"], str)
    names = [d.split("==")[0].lower().replace("_", "-") for d in meta["dependencies"]]
    assert sorted({n for n in names if names.count(n) > 1}) == []
