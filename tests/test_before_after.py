"""Which checkpoint ``recipe compare-to-start`` compares when no stage is named: the last finished one, so a run
stopped early (``--until``, a kill, a time limit) is compared at the checkpoint it has."""
from __future__ import annotations

import pytest

from recipe.config import load_config
from recipe.pipeline.before_after import last_finished_stage
from recipe.runs import RunDir


def _finish(run: RunDir, stage: str) -> None:
    run.write_manifest(stage, {"stage": stage, "status": "done"})


def test_the_last_done_stage_is_compared(tmp_path):
    cfg = load_config("tiny")
    run = RunDir(tmp_path / "r")
    with pytest.raises(ValueError, match="no finished stage"):
        last_finished_stage(run, cfg)
    _finish(run, "sft")
    _finish(run, "if_rl")
    run.write_manifest("multi_domain_rl", {"stage": "multi_domain_rl", "status": "running"})  # begun, not done
    assert last_finished_stage(run, cfg) == "if_rl"
    _finish(run, "swe_rl")
    assert last_finished_stage(run, cfg) == "swe_rl"
    assert last_finished_stage(run, cfg.model_copy(update={"run": cfg.run.model_copy(update={"until": "sft"})})) \
        == "sft"
