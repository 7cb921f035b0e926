"""Notebook parameters as papermill delivers them.

``papermill -y 'overrides: [a=1]'`` (and ``parameters=`` from Python) gives a real list; ``papermill -p overrides
'["a=1"]'`` gives the *string* ``'["a=1"]'``, which a loop would read one character at a time. ``as_list`` accepts
both, plus a bare ``key=value`` string, and refuses anything else with the parameter's name."""
from __future__ import annotations

from typing import Any

import yaml


def as_list(value: Any, name: str = "overrides") -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        if text[0] == "[":  # a YAML / JSON list written on the command line
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError as e:
                raise ValueError(f"parameter {name}={value!r} is not a list: {e}") from None
        else:
            return [text]  # one key=value
    if isinstance(value, (list, tuple)):
        bad = [v for v in value if not isinstance(v, (str, int, float, bool))]
        if bad:
            raise ValueError(f"parameter {name}: items must be strings such as 'mopd.steps=80', got {bad!r}")
        return [str(v) for v in value]
    raise ValueError(f"parameter {name} must be a list of strings (e.g. ['mopd.steps=80']), got "
                     f"{type(value).__name__} {value!r}")
