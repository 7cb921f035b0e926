"""The Kattis default output validator: token by token, case-insensitive and whitespace-insensitive unless the
flags say otherwise; numbers may differ within ``float_tolerance`` (absolute or relative)."""
from __future__ import annotations

import re


def _flag_value(flags: list[str], name: str) -> float | None:
    if name in flags:
        i = flags.index(name)
        try:
            return float(flags[i + 1])
        except (IndexError, ValueError):
            raise ValueError(f"validator flag {name} needs a number") from None
    return None


def default_validate(team: str, judge: str, flags: list[str] = ()) -> bool:
    flags = list(flags)
    case = "case_sensitive" in flags
    if "space_change_sensitive" in flags:  # the whitespace between tokens must match exactly
        if re.sub(r"\S+", "x", team.rstrip("\n")) != re.sub(r"\S+", "x", judge.rstrip("\n")):
            return False
    tol = _flag_value(flags, "float_tolerance")
    abs_tol = _flag_value(flags, "float_absolute_tolerance") or tol
    rel_tol = _flag_value(flags, "float_relative_tolerance") or tol
    t, j = team.split(), judge.split()
    if len(t) != len(j):
        return False
    for a, b in zip(t, j):
        if (a if case else a.lower()) == (b if case else b.lower()):
            continue
        if abs_tol is None and rel_tol is None:
            return False
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            return False
        if not ((abs_tol is not None and abs(fa - fb) <= abs_tol) or (rel_tol is not None and abs(fa - fb) <= rel_tol * abs(fb))):
            return False
    return True
