"""Reading one YAML file of the configuration (a profile's section file, an override set) as a mapping; a file that
is not valid YAML, or whose top level is not a mapping, fails with ``error`` naming the file."""
from __future__ import annotations

from pathlib import Path

import yaml


def read_mapping(path: Path, error: type[Exception], expected: str) -> dict:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as e:
        raise error(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise error(f"{path}: top level must be {expected}, got {type(data).__name__}")
    return data
