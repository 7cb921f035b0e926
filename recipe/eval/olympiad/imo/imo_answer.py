"""IMO-AnswerBench scoring (EVAL.md §4): AnswerAutoGrader judge, Math-Verify pre-check, avg@k ± SE.

Data: the benchmark CSV (``Problem ID, Problem, Short Answer, Category, Subcategory, Source``), version selectable:
``v1`` = ``answerbench.csv`` (deprecated), ``v2`` = ``answerbench_v2.csv`` (current upstream), ``v2-pr18`` =
``answerbench_v2.pr18-fixed.csv`` (unmerged upstream PR #18, fixes one quote). The upstream v2 file misparses row
``imo-bench-algebra-036`` (gold comes out as ``"Algebra"``): ``load_answerbench`` detects rows whose fields are
shifted (unknown category, empty source, a category name as gold, id/category mismatch) and reports them; by
default they are excluded from the score and listed, never graded against a wrong gold answer
(``on_malformed="error"`` refuses the file instead).

Grading one response: the thinking rule of ``recipe.eval.thinking`` (on: no ``</think>`` → no answer; auto: a
closed think block is removed, an unclosed one is no answer, text without think tags is graded whole; off: graded
whole) → no answer is incorrect, no judge call; rule-based pre-check: if the last ``\\boxed{}`` of the visible answer
equals the gold answer by the AIME/HMMT grader (``recipe.eval.benchmarks.math_grading``, NeMo-Skills' math grader),
it is correct without a judge call; otherwise the judge gets the benchmark's
prompt with ``{problem}``, ``{predicted_answer}`` (the visible solution) and ``{expected_answer}`` and its verdict is
the last ``\\boxed{Correct}`` / ``\\boxed{Incorrect}`` after ``</thinking>``. A judge reply without a verdict, or a
failed request, is recorded as ``judge_invalid`` (scored incorrect, counted separately).

The score is over every problem of the benchmark (EVAL.md §4): a problem without responses scores 0 and is counted
(``n_missing``, ``missing_problems``); rows excluded as malformed are listed, not counted.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipe.eval.olympiad.completion_client import ChatModel, JudgeError
from recipe.eval.olympiad.judge_prompts import PromptTemplate
from recipe.eval.olympiad.item_stats import mean_se

VERSIONS = {"v1": "answerbench.csv", "v2": "answerbench_v2.csv", "v2-pr18": "answerbench_v2.pr18-fixed.csv"}
CATEGORIES = ("Algebra", "Combinatorics", "Geometry", "Number theory")
COLUMNS = ("Problem ID", "Problem", "Short Answer", "Category", "Subcategory", "Source")
JUDGE_FIELDS = {"problem", "predicted_answer", "expected_answer"}
_VERDICT = re.compile(r"\\boxed\{\s*(Correct|Incorrect)\s*\}", re.I)


class MalformedBenchmark(ValueError):
    pass


@dataclass
class AnswerBench:
    version: str
    path: str
    rows: list[dict]
    malformed: list[dict] = field(default_factory=list)  # {"id", "reasons", "row"}


def row_problems(row: dict) -> list[str]:
    """Why a parsed row looks shifted/malformed (empty list = fine)."""
    why = []
    if None in row:
        why.append("extra cells beyond the header")
    for c in COLUMNS:
        if row.get(c) is None or not str(row.get(c)).strip():
            why.append(f"empty {c!r}")
    cat = row.get("Category")
    if cat not in CATEGORIES:
        why.append(f"unknown Category {cat!r}")
    if (row.get("Short Answer") or "").strip() in CATEGORIES:
        why.append(f"gold answer is a category name ({row['Short Answer']!r}): columns shifted")
    pid = (row.get("Problem ID") or "").lower()
    if cat in CATEGORIES and not pid.startswith("imo-bench-" + cat.lower().replace(" ", "_")) \
            and not pid.startswith("imo-bench-" + cat.lower().replace(" ", "")):
        why.append(f"Problem ID {row.get('Problem ID')!r} does not match Category {cat!r}")
    return why


def load_answerbench(data_dir: str | Path, version: str = "v2", *, on_malformed: str = "exclude") -> AnswerBench:
    if version not in VERSIONS:
        raise ValueError(f"unknown AnswerBench version {version!r}; choose from {sorted(VERSIONS)}")
    if on_malformed not in ("exclude", "error"):
        raise ValueError("on_malformed must be 'exclude' or 'error'")
    path = Path(data_dir) / VERSIONS[version]
    with open(path, newline="", encoding="utf-8") as f:
        parsed = list(csv.DictReader(f))
    rows, bad = [], []
    for r in parsed:
        why = row_problems(r)
        if why:
            bad.append({"id": r.get("Problem ID"), "reasons": why, "row": {k: v for k, v in r.items() if k is not None}})
        else:
            rows.append(r)
    if bad and on_malformed == "error":
        raise MalformedBenchmark(f"{path}: {len(bad)} malformed row(s): " + "; ".join(f"{b['id']}: {', '.join(b['reasons'])}" for b in bad))
    return AnswerBench(version, str(path), rows, bad)


def parse_judge_verdict(text: str) -> bool | None:
    """True/False from the judge's final ``\\boxed{Correct|Incorrect}`` after ``</thinking>``; None if absent."""
    tail = text.rsplit("</thinking>", 1)[-1]
    found = _VERDICT.findall(tail)
    if not found:
        return None
    return found[-1].lower() == "correct"


def grade_response(row: dict, response: Any, judge: ChatModel | None, prompt: PromptTemplate | None, *,
                   thinking: bool | None = True, precheck: bool = True, judge_sampling: dict | None = None) -> dict:
    """One sample → {"correct", "how", "extracted", "judge_output"?}. ``how`` ∈ no_answer | precheck | judge | judge_invalid.
    ``thinking``: True (on), False (off), None (auto)."""
    from recipe.eval.benchmarks.math_grading import equivalent, final_boxed
    from recipe.eval.thinking import parse_mode
    from recipe.rewards.extract import BadResponse, parse_response

    gold = row["Short Answer"]
    try:
        parsed = parse_response(response, parse_mode(thinking))
    except BadResponse as e:
        return {"correct": False, "how": "bad_response", "extracted": None, "detail": str(e)}
    visible = parsed.answer
    if not visible or not visible.strip():
        return {"correct": False, "how": "no_answer", "extracted": None,
                "detail": "reasoning never ended" if visible is None else "empty answer"}
    pred = final_boxed(visible)
    if precheck and pred and pred.strip():
        ok, how = equivalent(gold, pred)
        if ok:
            return {"correct": True, "how": "precheck", "extracted": pred, "check": how}
    if judge is None or prompt is None:
        raise ValueError("a judge model and prompt are needed for answers the pre-check does not settle")
    msgs = prompt.messages(problem=row["Problem"], predicted_answer=visible, expected_answer=gold)
    try:
        out = judge.complete(msgs, **(judge_sampling or {}))
    except JudgeError as e:
        return {"correct": False, "how": "judge_invalid", "extracted": pred, "detail": f"judge request failed: {e}"}
    verdict = parse_judge_verdict(out)
    if verdict is None:
        return {"correct": False, "how": "judge_invalid", "extracted": pred, "judge_output": out}
    return {"correct": verdict, "how": "judge", "extracted": pred, "judge_output": out}


def score_answerbench(bench: AnswerBench, responses: dict[str, list[Any]], judge: ChatModel | None,
                      prompt: PromptTemplate | None, *, thinking: bool | None = True, precheck: bool = True,
                      judge_sampling: dict | None = None, modes: dict[str, list[bool | None]] | None = None) -> dict:
    """avg@k ± SE over every problem of ``bench`` (a missing one is 0). ``responses``: Problem ID → its k responses
    (same k for every problem);
    ``modes``: Problem ID → each response's own thinking flag (else ``thinking`` for all)."""
    by_id = {r["Problem ID"]: r for r in bench.rows}
    malformed_ids = {b["id"] for b in bench.malformed}
    unknown = [i for i in responses if i not in by_id and i not in malformed_ids]
    if unknown:
        raise ValueError(f"responses for problems not in {bench.path}: {unknown[:5]}")
    ks = {len(v) for i, v in responses.items() if i in by_id}
    if len(ks) > 1:
        raise ValueError(f"every problem needs the same number of samples k, got {sorted(ks)}")
    items, per_problem = [], []
    counts = {"precheck": 0, "judge": 0, "judge_invalid": 0, "no_answer": 0, "bad_response": 0}
    for pid, row in by_id.items():  # every problem of the benchmark, in its order
        resps = responses.get(pid)
        if not resps:
            per_problem.append(0.0)
            items.append({"id": pid, "category": row["Category"], "gold": row["Short Answer"], "accuracy": 0.0,
                          "samples": [], "missing": True})
            continue
        own = (modes or {}).get(pid) or [thinking] * len(resps)
        grades = [grade_response(by_id[pid], r, judge, prompt, thinking=m, precheck=precheck,
                                 judge_sampling=judge_sampling) for r, m in zip(resps, own)]
        for g in grades:
            counts[g["how"]] += 1
        acc = sum(g["correct"] for g in grades) / len(grades)
        per_problem.append(acc)
        items.append({"id": pid, "category": by_id[pid]["Category"], "gold": by_id[pid]["Short Answer"],
                      "accuracy": acc, "samples": grades})
    stat = mean_se(100 * a for a in per_problem)
    by_cat = {c: mean_se(100 * it["accuracy"] for it in items if it["category"] == c) for c in CATEGORIES}
    return {
        "benchmark": f"imo-answerbench-{bench.version}", "data": bench.path, "metric": f"avg@{next(iter(ks), 0)}",
        "accuracy": stat["mean"], "se": stat["se"], "ci95": stat["ci95"], "n": stat["n"], "k": next(iter(ks), 0),
        "by_category": {c: v for c, v in by_cat.items() if v["n"]},
        "grading": counts, "judge_calls": counts["judge"] + counts["judge_invalid"],
        "missing_problems": [i for i in by_id if not responses.get(i)],
        "n_missing": sum(1 for i in by_id if not responses.get(i)),
        "malformed_rows": [{"id": b["id"], "reasons": b["reasons"]} for b in bench.malformed],
        "excluded_malformed_with_responses": sorted(malformed_ids & set(responses)),
        "judge_prompt": None if prompt is None else {"source": prompt.source, "sha256": prompt.sha256},
        "items": items,
    }
