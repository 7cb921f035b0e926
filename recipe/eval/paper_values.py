"""The ``benchmarks`` section of a profile read on its own (``<profile>/benchmarks.yaml``): benchmark sources and the
paper's Table 1 values, without resolving (and depending on) the rest of that profile."""
from __future__ import annotations

from functools import lru_cache

import yaml

from recipe.config.benchmarks_section import BenchmarksSection
from recipe.config.loader import PROFILES_DIR, ConfigError


@lru_cache(maxsize=4)
def profile_benchmarks(profile: str = "paper") -> BenchmarksSection:
    path = PROFILES_DIR / profile / "benchmarks.yaml"
    if not path.is_file():
        raise ConfigError(f"profile {profile!r} has no benchmarks.yaml at {path}")
    data = yaml.safe_load(path.read_text()) or {}
    try:
        return BenchmarksSection(**data.get("benchmarks", {}))
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None
