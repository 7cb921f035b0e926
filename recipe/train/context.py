"""What a training stage needs, bundled once (``setup`` returns this dataclass, not a tuple)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recipe.config.schema import RecipeConfig
from recipe.runs.layout import RunDir


@dataclass
class StageContext:
    run: RunDir
    stage: str
    cfg: RecipeConfig
    model: object
    tokenizer: object
    splits: dict                      # domain -> {"train": [records], "val": [records]}
    progress: bool = True

    @property
    def seed(self) -> int:
        return self.cfg.run.seed

    @property
    def state_dir(self) -> Path:
        return self.run.stage_dir(self.stage) / "state"
