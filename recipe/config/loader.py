"""Load a profile (a directory of YAML files, or one resolved YAML file) and apply ``key=value`` overrides.

Errors name the offending key and the file it came from (or ``override 'k=v'``), e.g.::

    ConfigError: recipe/config/profiles/tiny/stages.yaml: sft.lrr: unknown key (allowed: lr, min_lr, ...)
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from recipe.config.schema import RecipeConfig
from recipe.config.yaml_files import read_mapping

PROFILES_DIR = Path(__file__).parent / "profiles"


class ConfigError(ValueError):
    """A config could not be loaded: the message names the key and the file."""


def available_profiles() -> list[str]:
    return sorted(p.name for p in PROFILES_DIR.iterdir() if p.is_dir())


def _read_yaml(path: Path) -> dict:
    return read_mapping(path, ConfigError, "a mapping of sections")


def _read_profile(profile: str | Path) -> tuple[dict, dict[str, str]]:
    """Merge a profile's files; returns (data, origin) where origin maps each top-level key to its file."""
    path = Path(profile)
    if not path.exists():
        path = PROFILES_DIR / str(profile)
    if path.is_file():
        data = _read_yaml(path)
        return data, {k: str(path) for k in data}
    if not path.is_dir():
        raise ConfigError(f"unknown profile {str(profile)!r}: expected one of {available_profiles()} "
                          f"or a path to a profile directory / resolved config.yaml")
    merged: dict[str, Any] = {"profile": path.name}
    origin: dict[str, str] = {"profile": str(path)}
    for f in sorted(path.glob("*.yaml")):
        for key, value in _read_yaml(f).items():
            if key in merged and key != "profile":
                raise ConfigError(f"{f}: section {key!r} is also defined in {origin[key]}; define it once")
            merged[key] = value
            origin[key] = str(f)
    return merged, origin


def parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ConfigError(f"override {text!r}: expected key=value, e.g. sft.steps=50")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not p for p in key.split(".")):
        raise ConfigError(f"override {text!r}: bad key {key!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def _apply_override(data: dict, text: str, origin: dict[str, str], parsed: tuple | None = None) -> None:
    parts, value = parsed or parse_override(text)
    node = data
    for i, p in enumerate(parts[:-1]):
        if not isinstance(node, dict) or p not in node or not isinstance(node[p], dict):
            have = sorted(node) if isinstance(node, dict) else []
            raise ConfigError(f"override {text!r}: unknown key {'.'.join(parts[:i + 1])!r} "
                              f"(known here: {', '.join(map(str, have))})")
        node = node[p]
    node[parts[-1]] = value  # unknown leaf keys are caught by validation, with this override named
    origin[".".join(parts)] = f"override {text!r}"


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    cur: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or not (isinstance(cur, type) and issubclass(cur, BaseModel)):
            return []
        field = cur.model_fields.get(part)
        if field is None:
            return []
        cur = field.annotation
    if isinstance(cur, type) and issubclass(cur, BaseModel):
        return list(cur.model_fields)
    return []


def _format_errors(err: ValidationError, origin: dict[str, str]) -> str:
    lines = []
    for e in err.errors():
        loc = tuple(e["loc"])
        dotted = ".".join(str(p) for p in loc) or "<root>"
        src = None
        for n in range(len(loc), 0, -1):  # most specific origin first (overrides are recorded per key)
            src = origin.get(".".join(str(p) for p in loc[:n]))
            if src:
                break
        src = src or "profile"
        if e["type"] == "extra_forbidden":
            allowed = _allowed_keys(RecipeConfig, loc)
            msg = f"unknown key{' (allowed: ' + ', '.join(allowed) + ')' if allowed else ''}"
        elif e["type"] == "missing":
            msg = "required key is missing"
        else:
            msg = f"{e['msg']} (got {e.get('input')!r})"
        lines.append(f"{src}: {dotted}: {msg}")
    return "invalid config:\n  " + "\n  ".join(lines)


def load_config(profile: str | Path = "tiny", overrides: Iterable[str] = ()) -> RecipeConfig:
    """Load ``profile`` (name, profile directory or resolved config.yaml) and apply ``key=value`` overrides."""
    data, origin = _read_profile(profile)
    for text in overrides or ():
        if text.startswith("@"):  # a named override set (recipe.config.override_sets)
            from recipe.config.override_sets import OverrideSetError, read_override_set
            try:
                path, entries = read_override_set(text[1:])
            except OverrideSetError as e:
                raise ConfigError(str(e)) from None
            for key, value in entries:
                _apply_override(data, f"{path}: {key}", origin, parsed=(key.split("."), value))
            continue
        _apply_override(data, text, origin)
    try:
        return RecipeConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_format_errors(e, origin)) from None


def config_to_yaml(cfg: RecipeConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)


def config_hash(cfg: RecipeConfig | dict) -> str:
    data = cfg.model_dump(mode="json") if isinstance(cfg, BaseModel) else cfg
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
