"""The base of every typed config section: a key the section does not define is refused, never ignored.

``extra="forbid"`` is what lets ``recipe.config.loader`` name a misspelt or unknown key, with the file or override it
came from and the keys the section allows, instead of dropping it silently.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictSection(BaseModel):
    """A config section: unknown keys and wrong types are refused when the config is loaded."""

    model_config = ConfigDict(extra="forbid")


class AssignmentCheckedSection(StrictSection):
    """A section whose fields are also validated when one is set on a loaded config: the stage hyperparameters
    (``recipe/config/stages.py``) and their pairwise judge, which the trainers read directly. ``cfg.sft.lr = 0``
    raises as ``lr: 0`` in a profile does; the other sections check their values only when the config is loaded."""

    model_config = ConfigDict(validate_assignment=True)
