"""Artifacts get the mode the process's umask gives a plain write: checkpoints and JSON files are written through
0600 temporary files (``tempfile.mkstemp``; ``save_pretrained`` and safetensors do the same), and on a shared
cluster filesystem a 0600 ``model.safetensors`` would lock collaborators out of a run."""
from __future__ import annotations

import os
import stat

import pytest
import torch

from recipe.runs.layout import write_json_atomic
from recipe.train.state import save_state


@pytest.fixture
def umask():
    old = os.umask(0o022)
    yield lambda m: os.umask(m)
    os.umask(old)


def _modes(root):
    return {p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}


@pytest.mark.parametrize("mask,file_mode,dir_mode", [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)])
def test_checkpoint_and_json_follow_the_umask(tmp_path, umask, mask, file_mode, dir_mode):
    from tests._tiny_checkpoint import build_tiny_checkpoint
    umask(mask)
    ckpt = build_tiny_checkpoint(tmp_path / "checkpoint")
    modes = _modes(ckpt)
    assert "model.safetensors" in modes
    assert {k: v for k, v in modes.items() if v != file_mode} == {}
    assert stat.S_IMODE(ckpt.stat().st_mode) == dir_mode

    write_json_atomic(tmp_path / "manifest.json", {"status": "done"})
    assert stat.S_IMODE((tmp_path / "manifest.json").stat().st_mode) == file_mode


def test_step_state_follows_the_umask(tmp_path, umask):
    umask(0o022)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    save_state(tmp_path / "state", model, opt, step=1)
    modes = _modes(tmp_path / "state")
    assert set(modes) == {"model.safetensors", "optimizer.safetensors", "state.json"}
    assert set(modes.values()) == {0o644}
