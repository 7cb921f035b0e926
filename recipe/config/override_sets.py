"""Named override sets: a file of ``dotted.key: value`` lines applied as if each were a ``--set key=value``.

``recipe run --profile small -s @small-smoke`` applies ``recipe/config/overrides/small-smoke.yaml``; ``@PATH`` also
takes a path to such a file. Each entry is checked like a command-line override (an unknown section is an error that
names the set's file, an unknown leaf key fails validation naming it), and later ``-s`` overrides win over a set's.
"""
from __future__ import annotations

from pathlib import Path

from recipe.config.yaml_files import read_mapping

OVERRIDES_DIR = Path(__file__).parent / "overrides"


class OverrideSetError(ValueError):
    """An override set could not be read: the message names the file."""


def available_sets() -> list[str]:
    return sorted(p.stem for p in OVERRIDES_DIR.glob("*.yaml"))


def override_set_path(name: str) -> Path:
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return path
    path = OVERRIDES_DIR / f"{name}.yaml"
    if not path.exists():
        raise OverrideSetError(f"unknown override set {name!r}: expected one of {available_sets()} or a path to a "
                               f"YAML file of dotted.key: value lines")
    return path


def read_override_set(name: str) -> tuple[Path, list[tuple[str, object]]]:
    """(file, [(dotted key, value), ...]) of an override set, in file order."""
    path = override_set_path(name)
    data = read_mapping(path, OverrideSetError, "a mapping of dotted.key: value")
    bad = [k for k in data if not isinstance(k, str) or not k or any(not p for p in k.split("."))]
    if bad:
        raise OverrideSetError(f"{path}: bad key(s) {bad}: each key is a dotted path such as sft.steps")
    return path, list(data.items())
