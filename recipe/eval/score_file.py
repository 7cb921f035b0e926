"""``recipe eval score``: score responses that already exist, from any system.

Input: JSONL, one sample per line = the benchmark's own row fields plus ``response`` (text, or a chat message with
``reasoning_content``); optional ``finish_reason`` and ``thinking`` (the
generation mode; default the suite's). Several lines with the same item id are that item's k samples.
Lines are split on ``\\n`` only (benchmark text may hold U+2028, which ``str.splitlines`` would split on).
A malformed line (not JSON, not an object, missing fields, a field the scorer cannot read) is reported with its line
number and reason in ``summary.json["malformed"]`` and not scored; every other line is scored.
Output: ``items.jsonl`` (per-item verdicts) and ``summary.json`` (the suite's summary + input file + malformed rows).
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.eval.harness import ITEMS, summarize_verdicts, write_items
from recipe.eval.suites import RowError, get_suite
from recipe.hub.hashing import sha256_file

SUMMARY = "summary.json"


def iter_jsonl_lines(path: Path):
    """(line number, text) for each non-blank line, split on ``\\n`` only."""
    text = Path(path).read_text(encoding="utf-8")
    for no, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield no, line


def score_responses(suite_name: str, responses: Path, out_dir: Path) -> dict:
    suite = get_suite(suite_name)
    responses = Path(responses)
    if not responses.is_file():
        raise FileNotFoundError(f"responses file {responses} not found")
    verdicts: dict[str, list] = {}
    finish: dict[str, list] = {}
    malformed: list[dict] = []
    for no, line in iter_jsonl_lines(responses):
        try:
            row = json.loads(line)
        except ValueError as e:
            malformed.append({"line": no, "error": f"not JSON: {e}"})
            continue
        try:
            iid = suite.check_row(row)
            if "response" not in row:
                raise RowError("missing field 'response'")
            thinking = row.get("thinking", suite.defaults.thinking)
            if not isinstance(thinking, bool):
                raise RowError(f"field 'thinking' must be true/false, got {thinking!r}")
            v = suite.score(row, row["response"], thinking)
        except RowError as e:
            malformed.append({"line": no, "error": str(e)})
            continue
        v = dict(v, line=no)
        verdicts.setdefault(iid, []).append(v)
        finish.setdefault(iid, []).append(row.get("finish_reason"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize_verdicts(suite, verdicts, finish if any(f for fs in finish.values() for f in fs) else None)
    summary.update({"responses_file": str(responses), "responses_sha256": sha256_file(responses),
                    "lines_scored": sum(len(v) for v in verdicts.values()), "malformed": malformed,
                    "settings": {"scorer": f"{suite.name}@{suite.scorer_version}", "scorer_version": suite.scorer_version,
                                 "judge": suite.judge, "backend": "external responses"}})
    write_items(out_dir / ITEMS, verdicts)
    (out_dir / SUMMARY).write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    return summary
