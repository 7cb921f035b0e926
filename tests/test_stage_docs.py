"""The notebooks' opening texts: every phase of the plan is described, the values shown
are the config's (an override changes the text), and the committed notebooks carry no hard-coded values."""
from __future__ import annotations

import json

import pytest

from recipe.config import load_config
from recipe.config.schema import STAGE_PLAN
from recipe.reporting.stage_docs import config_values, explain, rl_stage_menu


@pytest.mark.parametrize("phase", ["data", *STAGE_PLAN, "report"])
def test_every_phase_is_described_with_its_config_values(phase):
    cfg = load_config("tiny")
    text = explain(cfg, phase)
    values = config_values(cfg, phase)
    assert values, phase
    for k, v in values.items():
        assert f"| `{k}` | `{v}` |" in text


def test_text_follows_the_config_not_a_copy_of_it():
    cfg = load_config("tiny")
    a = explain(cfg, "mopd")
    b = explain(load_config("tiny", ["mopd.steps=7", "mopd.importance_mask_high=3.0"]), "mopd")
    assert cfg.mopd.steps != 7 and f"| `steps` | `{cfg.mopd.steps}` |" in a and "| `steps` | `7` |" not in a
    assert "| `steps` | `7` |" in b and "| `importance_mask_high` | `3.0` |" in b


def test_rl_stage_menu_lists_every_grpo_stage_of_the_plan():
    menu = rl_stage_menu(load_config("tiny"))
    for s in STAGE_PLAN:
        assert (f"**`{s}`**" in menu) == (s not in ("sft", "mopd"))


def test_notebook_markdown_has_no_stale_wording(project_root):
    for p in sorted((project_root / "notebooks").glob("*.ipynb")):
        text = " ".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"] if c["cell_type"] == "markdown")
        assert "greedy" not in text.lower(), p.name  # scores are sampled avg@k
