"""A stage that made no update saves its input checkpoint unchanged; its validation reuses the input's rows instead
of sampling them again, and only then (``recipe.pipeline.stage_runner.validate_checkpoint``)."""
from __future__ import annotations

import shutil

import torch

from recipe.config import load_config
from recipe.domains import build_tiny_splits, tokenizer_corpus
from recipe.model import build_tiny, save_checkpoint
from recipe.pipeline import stage_runner
from recipe.runs.content_hashes import sha256_dir
from recipe.validation.samples import write_samples


def test_validation_reuses_the_input_rows_only_for_an_unchanged_checkpoint(tmp_path, monkeypatch):
    cfg = load_config("tiny", ["domains.tiny.train_items=50", "domains.tiny.val_items=5"])
    sp = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)
    model, tok = build_tiny(cfg.model, tokenizer_corpus(sp, list(sp), 50), 0)
    inp, out = tmp_path / "input_ckpt", tmp_path / "stage_ckpt"
    save_checkpoint(model, tok, inp)
    shutil.copytree(inp, out)
    input_rows = [{"domain": "math", "item_id": "m0", "sample": 0, "response": "7", "reward": 1.0}]
    samples = tmp_path / "input_samples.jsonl"
    write_samples(samples, input_rows)
    fresh = [{"domain": "math", "item_id": "m0", "sample": 0, "response": "8", "reward": 0.0}]
    calls = []
    monkeypatch.setattr(stage_runner, "validate_samples", lambda *a, **k: calls.append(1) or fresh)

    validate = stage_runner.validate_checkpoint
    rows, reused = validate(cfg, model, tok, sp, sha256_dir(out), sha256_dir(inp), samples)
    assert (rows, reused, calls) == (input_rows, str(samples), [])

    with torch.no_grad():  # one weight moved by one step: validated afresh
        next(model.parameters()).view(-1)[0] += 1e-3
    save_checkpoint(model, tok, out)
    rows, reused = validate(cfg, model, tok, sp, sha256_dir(out), sha256_dir(inp), samples)
    assert (rows, reused, calls) == (fresh, None, [1])

    samples.unlink()  # no input rows to reuse (or no input at all, as for SFT): validated
    shutil.rmtree(out)
    shutil.copytree(inp, out)
    assert validate(cfg, model, tok, sp, sha256_dir(out), sha256_dir(inp), samples) == (fresh, None)
    assert validate(cfg, model, tok, sp, sha256_dir(out), None, None) == (fresh, None)
