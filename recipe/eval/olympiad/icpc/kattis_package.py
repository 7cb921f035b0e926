"""Kattis problem packages (problemarchive.org format; legacy and 2023-07 keys): ``problem.yaml``,
``data/sample/*.in|.ans``, ``data/secret/**/*.in|.ans``, optional output validator in ``output_validators/<name>/``
(legacy) or ``output_validator/`` (2023-07), a single C++ file.

Read from ``problem.yaml``: ``name``; ``limits.time_limit`` (s; else a ``.timelimit`` file; else the default given
by the caller, recorded) and ``limits.memory`` (MiB); ``validation`` (``default`` | ``custom`` [``interactive``
is refused: no interactor support]); ``validator_flags`` for the default validator (``case_sensitive``,
``space_change_sensitive``, ``float_tolerance E`` / ``float_relative_tolerance E`` / ``float_absolute_tolerance E``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml


class KattisPackageError(ValueError):
    pass


@dataclass
class KattisProblem:
    root: Path
    name: str
    time_limit_s: float
    time_limit_source: str
    memory_mb: int
    validation: str
    validator_flags: list[str] = field(default_factory=list)
    validator_source: Path | None = None
    samples: list[tuple[Path, Path]] = field(default_factory=list)
    secret: list[tuple[Path, Path]] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.root.name


def _cases(d: Path) -> list[tuple[Path, Path]]:
    out = []
    for i in sorted(d.rglob("*.in")) if d.is_dir() else []:
        a = i.with_suffix(".ans")
        if not a.is_file():
            raise KattisPackageError(f"{i}: no matching .ans")
        out.append((i, a))
    return out


def load_kattis(root: str | Path, *, default_time_limit_s: float = 2.0, default_memory_mb: int = 2048) -> KattisProblem:
    root = Path(root)
    y = root / "problem.yaml"
    if not y.is_file():
        raise KattisPackageError(f"{root}: no problem.yaml")
    meta = yaml.safe_load(y.read_text()) or {}
    if not isinstance(meta, dict):
        raise KattisPackageError(f"{y}: not a mapping")
    limits = meta.get("limits") or {}
    if "time_limit" in limits:
        tl, src = float(limits["time_limit"]), "problem.yaml limits.time_limit"
    elif (root / ".timelimit").is_file():
        tl, src = float((root / ".timelimit").read_text().split()[0]), ".timelimit"
    else:
        tl, src = default_time_limit_s, "default (package states none)"
    words = str(meta.get("validation", "default")).split()
    validation = words[0] if words else "default"
    if "interactive" in words or validation not in ("default", "custom"):
        raise KattisPackageError(f"{y}: validation {' '.join(words)!r} (interactive problems need an interactor: unsupported)")
    vsrc = None
    if validation == "custom":
        cands = sorted((root / "output_validators").glob("*/*.cpp")) + sorted((root / "output_validator").glob("*.cpp"))
        if not cands:
            raise KattisPackageError(f"{root}: validation custom but no output_validators/<name>/*.cpp")
        vsrc = cands[0]
    samples, secret = _cases(root / "data" / "sample"), _cases(root / "data" / "secret")
    if not secret:
        raise KattisPackageError(f"{root / 'data' / 'secret'}: no test cases")
    flags = meta.get("validator_flags") or ""
    return KattisProblem(root, str(meta.get("name", root.name)), tl, src, int(limits.get("memory", default_memory_mb)),
                         validation, flags.split() if isinstance(flags, str) else list(flags), vsrc, samples, secret)
