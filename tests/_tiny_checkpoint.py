"""A tiny NemotronHForCausalLM checkpoint folder (reduced tiny profile, untrained) for the eval tests."""
from __future__ import annotations

from pathlib import Path


def build_tiny_checkpoint(path: Path) -> Path:
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, tokenizer_corpus
    from recipe.model import build_tiny, save_checkpoint
    cfg = load_config("tiny", ["domains.tiny.train_items=50", "domains.tiny.val_items=5"])
    sp = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)
    model, tok = build_tiny(cfg.model, tokenizer_corpus(sp, list(sp), 100), 0)
    return save_checkpoint(model, tok, path)
