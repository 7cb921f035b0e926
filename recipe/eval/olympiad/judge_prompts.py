"""Judge prompt templates are benchmark data: loaded at run time from a file, never embedded in the code.

Accepted files: NeMo-Skills/NeMo-Gym prompt YAML (``user:`` holds the template; ``system:`` optional) — e.g. the
fixtures' ``imo_bench/prompts/nvidia_gym/answerbench_autograder_judge.yaml`` (Apache-2.0, a copy of NeMo-Skills
``judge/imo_answerbench.yaml``) and ``proofbench_judge.yaml`` — or a plain text file (the whole text is the user
template). Templates use ``str.format`` placeholders (``{{``/``}}`` for literal braces, as in those YAML files).
"""
from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class PromptTemplate:
    user: str
    system: str | None
    source: str
    sha256: str

    @property
    def fields(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.user) if f}

    def messages(self, **values: str) -> list[dict]:
        missing = self.fields - set(values)
        if missing:
            raise KeyError(f"{self.source}: no value for placeholders {sorted(missing)}")
        msgs = [{"role": "system", "content": self.system}] if self.system else []
        return msgs + [{"role": "user", "content": self.user.format(**values)}]


def load_prompt(path: str | Path, required: set[str] = frozenset()) -> PromptTemplate:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"judge prompt file not found: {p} (the benchmark's prompt is data: point to a copy, "
                                "e.g. <IMO-Bench checkout>/prompts/nvidia_gym/...)")
    raw = p.read_text()
    if p.suffix in (".yaml", ".yml"):
        d = yaml.safe_load(raw) or {}
        if not isinstance(d, dict) or not isinstance(d.get("user"), str):
            raise ValueError(f"{p}: a prompt YAML needs a string 'user' key")
        t = PromptTemplate(d["user"], d.get("system"), str(p), hashlib.sha256(raw.encode()).hexdigest())
    else:
        t = PromptTemplate(raw, None, str(p), hashlib.sha256(raw.encode()).hexdigest())
    if required - t.fields:
        raise ValueError(f"{p}: template lacks placeholders {sorted(required - t.fields)}")
    return t
