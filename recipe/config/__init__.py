"""Typed recipe configuration: profiles ``tiny`` (default) and ``paper``. See ``schema.py`` for the keys."""
from recipe.config.loader import ConfigError, available_profiles, config_hash, config_to_yaml, load_config, parse_override
from recipe.config.schema import STAGE_PLAN, RecipeConfig

__all__ = ["ConfigError", "RecipeConfig", "STAGE_PLAN", "available_profiles", "config_hash", "config_to_yaml",
           "load_config", "parse_override"]
