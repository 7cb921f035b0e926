"""A small-profile stage killed after a step checkpoint resumes on the real SmolLM2 weights: model and optimizer
(tied embeddings included) come back from the step state, only the remaining steps run, and the stage ends where an
uninterrupted one ends. The states follow the profile's time budget (``run.state_save_every_s``), set to 0 here so
that every step but the last saves one. The kill is deterministic (raised right after step 2's metrics row is written, before
anything else), as the tiny profile's resume tests do it."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from _smollm2 import smollm2_folder
from _step_hooks import Killed, die_after_step, record_steps
from recipe.config import load_config
from recipe.domains import build_tiny_splits
from recipe.model.pretrained import load_pretrained
from recipe.runs import RunDir
from recipe.train.context import StageContext
from recipe.train.sft import train_sft

pytestmark = [pytest.mark.slow, pytest.mark.starts_first(rank=4)]
OVERRIDES = ["@small-smoke", "sft.steps=3", "run.state_save_every_s=0", "sft.save_every=1000", "sft.max_seq_len=96",
             "sft.lr=1e-4"]
TIMING = {"time_s"}


def _context(tmp_path: Path, run_name: str) -> StageContext:
    cfg = load_config("small", [*OVERRIDES, f"model.name={smollm2_folder()}"])
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    model, tok = load_pretrained(cfg.model)
    return StageContext(run=RunDir(tmp_path / run_name), stage="sft", cfg=cfg, model=model, tokenizer=tok,
                        splits=splits, progress=False)


def _rows(ctx) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in ctx.run.read_metrics("sft")]


def test_killed_small_sft_resumes_after_its_last_saved_step(tmp_path, monkeypatch, capsys, one_torch_thread):
    ref = _context(tmp_path, "ref")
    train_sft(ref, ref.cfg.sft)
    ref_rows = _rows(ref)
    ref_params = {n: p.detach().clone() for n, p in ref.model.named_parameters()}
    del ref

    victim = _context(tmp_path, "victim")
    die_after_step(monkeypatch, victim.run, 2)
    with pytest.raises(Killed):
        train_sft(victim, victim.cfg.sft)
    monkeypatch.undo()
    assert len(victim.run.read_metrics("sft")) == 3  # steps 0..2 logged, the last state covers 2 steps
    del victim
    capsys.readouterr()

    again = _context(tmp_path, "victim")  # a new process reloads the stage's input: the imported weights
    imported = again.model.model.embed_tokens.weight.detach().clone()
    ran = record_steps(monkeypatch, again.run)
    train_sft(again, again.cfg.sft)
    assert ran == [2], "the re-run must run only the steps after the saved state (a restart runs 0..2)"
    assert "[sft] resuming at step 2 of 3" in capsys.readouterr().err
    rows = _rows(again)
    assert [r["step"] for r in rows] == [0, 1, 2]
    for a, b in zip(rows, ref_rows):
        assert a["tokens"] == b["tokens"] and a["loss"] == pytest.approx(b["loss"], rel=1e-4)
    for name, p in again.model.named_parameters():
        assert torch.allclose(p, ref_params[name], atol=1e-5), name
    assert not torch.equal(again.model.model.embed_tokens.weight, imported)  # SFT moved the imported weights
