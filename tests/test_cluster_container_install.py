"""The package installs into the NeMo-RL v0.7.0 container's Python (3.13.13, NEMO_RL.md §1.1).

A wheel is built with this environment's setuptools, then installed (no dependencies, no index) into a fresh
Python 3.13 venv: pip refuses it there if ``requires-python`` excludes 3.13. The container only runs the
standard-library fingerprint check from the code snapshot, which is imported from the installed package."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python313() -> str | None:
    found = shutil.which("python3.13")
    cands = ([found] if found else []) + sorted(glob.glob("/root/.pyenv/versions/3.13*/bin/python3.13")) \
        + sorted(glob.glob("/usr/bin/python3.13"))
    for c in cands:
        try:
            out = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True,
                                 timeout=30)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == "(3, 13)":
            return c
    return None


def test_requires_python_admits_the_container_python():
    text = (ROOT / "pyproject.toml").read_text()
    from packaging.specifiers import SpecifierSet
    import tomllib

    spec = SpecifierSet(tomllib.loads(text)["project"]["requires-python"])
    assert "3.13.13" in spec and "3.11.7" in spec
    assert "3.10.0" not in spec


def test_installs_into_a_python313_venv(tmp_path):
    py = _python313()
    if py is None:
        pytest.skip("no Python 3.13 interpreter on this machine (python3.13 not on PATH, no pyenv 3.13, Debian "
                    "python3.13 not installed): the install into the container's Python is not exercised here")
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
                    str(ROOT)], check=True, timeout=300, cwd=tmp_path)
    wheel = next(wheels.glob("*.whl"))
    venv = tmp_path / "venv313"
    subprocess.run([py, "-m", "venv", str(venv)], check=True, timeout=120)
    vpy = venv / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    r = subprocess.run([str(vpy), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                       capture_output=True, text=True, timeout=300, env=clean)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(vpy), "-c", "import sys, importlib.metadata as m; "
                        "import recipe.cluster.fingerprint_check as f; "
                        "print(sys.version_info[:2], m.version('nemotron-cascade2-recipe'), f.__file__)"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path, env=clean)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("(3, 13) 0.1.0") and "venv313" in r.stdout
