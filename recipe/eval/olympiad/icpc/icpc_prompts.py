"""Prompts from the ICPC WF 2025 statement texts (fixture ``icpc_wf2025/statements/<L>-<slug>.txt``). The text is
a lossy PDF extraction (flattened exponents, interleaved samples): used as prompts only, never as judge data."""
from __future__ import annotations

import re
from pathlib import Path

INSTRUCTION = ("Solve the following ICPC World Finals problem in C++17. Read from standard input and write to "
               "standard output. Put the complete program in one ```cpp code block at the end.\n\n")


def statement_prompts(statements_dir: str | Path) -> list[dict]:
    out = []
    for f in sorted(Path(statements_dir).glob("*.txt")):
        letter, _, slug = f.stem.partition("-")
        text = f.read_text(encoding="utf-8")
        tl = re.search(r"Time limit:\s*([\d.]+)\s*second", text)
        out.append({"problem": letter, "slug": slug, "time_limit_s": float(tl.group(1)) if tl else None,
                    "interactive": "interactive" in text.lower()[:3000] or "interaction" in text.lower()[:3000],
                    "messages": [{"role": "user", "content": INSTRUCTION + text}]})
    return out
