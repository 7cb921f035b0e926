"""Which checkpoint ``recipe compare-to-start`` compares when no stage is named: the last finished one, so a run
stopped early (``--until``, a kill, a time limit) is compared at the checkpoint it has."""
from __future__ import annotations

import pytest

from recipe.config import load_config
from recipe.pipeline.before_after import last_finished_stage
from recipe.runs import RunDir


def _finish(run: RunDir, stage: str) -> None:
    ckpt = run.checkpoint_dir(stage)
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text("{}")


def test_the_last_stage_with_a_complete_checkpoint_is_compared(tmp_path):
    cfg = load_config("tiny")
    run = RunDir(tmp_path / "r")
    with pytest.raises(ValueError, match="no finished stage"):
        last_finished_stage(run, cfg)
    _finish(run, "sft")
    _finish(run, "if_rl")
    run.checkpoint_dir("multi_domain_rl").mkdir(parents=True)  # begun, not written
    assert last_finished_stage(run, cfg) == "if_rl"
    _finish(run, "swe_rl")
    assert last_finished_stage(run, cfg) == "swe_rl"
    assert last_finished_stage(run, cfg.model_copy(update={"run": cfg.run.model_copy(update={"until": "sft"})})) \
        == "sft"
