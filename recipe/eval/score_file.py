"""``recipe eval score``: score responses that already exist, from any system.

Input: JSONL, one sample per line = the benchmark's own row fields plus ``response`` (text, or a chat message with
``reasoning_content``); optional ``finish_reason`` and ``thinking`` (how that response was generated: ``on``/``true``,
``off``/``false`` or ``auto``; default the command's ``--thinking``, itself ``auto`` -- see ``recipe.eval.thinking``).
A line with ``finish_reason: length`` whose reasoning never closed is no answer in every mode but off (``truncated``).
Items with different sample counts make the summary ``complete: false``.
Several lines with the same item id are that item's k samples.
Lines are split on ``\\n`` only (benchmark text may hold U+2028, which ``str.splitlines`` would split on).
A malformed line (not JSON, not an object, missing fields, a field the scorer cannot read, an instruction id no
checker knows) is reported with its line number, kind and reason in ``summary.json["malformed"]`` and not scored;
every other line is scored. The command exits non-zero when any line was malformed, after writing both files.
Output: ``items.jsonl`` (per-item verdicts) and ``summary.json`` (the suite's summary + input file + malformed rows).
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.eval.benchmarks.suite_registry import RowError, get_suite
from recipe.eval.harness import ITEMS, score_one, summarize_verdicts, write_items
from recipe.eval.thinking import thinking_flag, thinking_name
from recipe.runs.content_hashes import sha256_file

SUMMARY = "summary.json"


def iter_jsonl_lines(path: Path):
    """(line number, text) for each non-blank line, split on ``\\n`` only."""
    text = Path(path).read_text(encoding="utf-8")
    for no, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield no, line


def _instruction_ids(row: dict) -> list | None:
    """The instruction ids a row asks for (benchmark rows, or a project record's verifier spec); None if none."""
    ids = row.get("instruction_id_list")
    spec = row.get("verifier")
    if ids is None and isinstance(spec, dict):
        ids = spec.get("instruction_id_list")
    return ids if isinstance(ids, list) else None


def unknown_instruction_ids(row: dict) -> list[str]:
    """Ids of the row that no instruction checker knows (the checker registry decides)."""
    ids = _instruction_ids(row)
    if not ids:
        return []
    from recipe.rewards.instruction_following import supported_instructions
    known = set(supported_instructions())
    return [i for i in ids if isinstance(i, str) and i not in known]


def score_responses(suite_name: str, responses: Path, out_dir: Path, thinking: bool | None = None) -> dict:
    """Score every good line, list the malformed ones. ``thinking``: the mode of lines without their own
    ``thinking`` field (None = auto)."""
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
            malformed.append({"line": no, "kind": "not_json", "error": f"not JSON: {e}"})
            continue
        try:
            iid = suite.check_row(row)
            if "response" not in row:
                raise RowError("missing field 'response'")
            unknown = unknown_instruction_ids(row)
            if unknown:
                malformed.append({"line": no, "kind": "unknown_instruction_id",
                                  "error": f"unknown instruction id(s) {unknown}: no checker"})
                continue
            try:
                mode = thinking_flag(row["thinking"]) if "thinking" in row else thinking
            except ValueError as e:
                raise RowError(f"field {e}") from None
            v = score_one(suite, row, row["response"], mode, row.get("finish_reason"))
        except RowError as e:
            malformed.append({"line": no, "kind": "row", "error": str(e)})
            continue
        v = dict(v, line=no)
        verdicts.setdefault(iid, []).append(v)
        finish.setdefault(iid, []).append(row.get("finish_reason"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize_verdicts(suite, verdicts, finish if any(f for fs in finish.values() for f in fs) else None)
    summary.update({"complete": "unequal_k" not in summary,
                    "responses_file": str(responses), "responses_sha256": sha256_file(responses),
                    "lines_scored": sum(len(v) for v in verdicts.values()), "malformed": malformed,
                    "settings": {"scorer": f"{suite.name}@{suite.scorer_version}", "scorer_version": suite.scorer_version,
                                 "judge": suite.judge, "backend": "external responses",
                                 "thinking": thinking_name(thinking)}})
    write_items(out_dir / ITEMS, verdicts)
    (out_dir / SUMMARY).write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    return summary
