"""One stage's training context on the tiny model, built in-process in about a second (no run, no data phase):
few items per domain, an untrained tiny NemotronH and its tokenizer, a run folder under ``tmp_path``."""
from __future__ import annotations

import copy
from pathlib import Path

from recipe.config import load_config
from recipe.domains import build_tiny_splits, tokenizer_corpus
from recipe.model import build_tiny
from recipe.runs import RunDir
from recipe.train.context import StageContext

SMALL = ["domains.tiny.train_items=60", "domains.tiny.val_items=8", "model.tokenizer.corpus_examples=200"]


def tiny_context(tmp_path: Path, stage: str, overrides=(), *, run_name: str = "run") -> StageContext:
    cfg = load_config("tiny", [*SMALL, *overrides])
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    corpus = tokenizer_corpus(splits, cfg.domains.names, cfg.model.tokenizer.corpus_examples // 2)
    model, tok = build_tiny(cfg.model, corpus, cfg.run.seed)
    return StageContext(run=RunDir(Path(tmp_path) / run_name), stage=stage, cfg=cfg, model=model, tokenizer=tok,
                        splits=splits, progress=False)


def params(model) -> dict:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def sharper_teacher(model, factor: float = 3.0):
    """A teacher that differs from the student: the same weights with the output logits scaled by ``factor``."""
    t = copy.deepcopy(model).eval()
    t.lm_head.weight.data.mul_(factor)
    return t
