"""IMO-ProofBench grading (EVAL.md §4): ProofAutoGrader prompt, 0–7 scale, several judge samples per proof.

The judge prompt is the benchmark's (loaded at run time, e.g. the fixtures' NVIDIA copy
``imo_bench/prompts/nvidia_gym/proofbench_judge.yaml`` with ``{problem}``, ``{reference_solution}``, ``{rubric}``
= grading guidelines, ``{predicted_answer}`` = the proof); a grade is the first ``<points>N out of 7</points>``
block. Aggregation over the judge samples of one proof is a named option:
- ``zero_if_any_zero`` (EVAL.md §4, the paper's rule): 0 if any grade is 0, otherwise the mean;
- ``mean``: the plain mean (over-rates proofs a few graders reject: 73.8 vs human 61.9 in EVAL.md's calibration).
Grades without a ``<points>`` block (or a failed judge request) are ``invalid``: skipped (and counted) or graded 0,
per config (the paper profile: 0). A proof whose reasoning never ended (no ``</think>``) is empty and gets 0 without a
judge call. Every grade is kept.

The score is over every problem of the benchmark (EVAL.md §4): a problem without a proof scores 0
(``missing_problems``), and so does a proof no judge reply could grade (``ungraded``); both are counted.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Callable

from recipe.eval.olympiad.completion_client import ChatModel, JudgeError
from recipe.eval.olympiad.judge_prompts import PromptTemplate
from recipe.eval.olympiad.item_stats import mean_se

VERSIONS = {"v1": "proofbench.csv", "v2": "proofbench_v2.csv"}
JUDGE_FIELDS = {"problem", "reference_solution", "rubric", "predicted_answer"}
_POINTS = re.compile(r"<points>\s*(\d+)\s*out of\s*7\s*</points>", re.I)


def load_proofbench(data_dir: str | Path, version: str = "v2") -> list[dict]:
    if version not in VERSIONS:
        raise ValueError(f"unknown ProofBench version {version!r}; choose from {sorted(VERSIONS)}")
    path = Path(data_dir) / VERSIONS[version]
    if not path.is_file():
        raise FileNotFoundError(f"ProofBench {version} not found: {path} (--data is a checkout of the IMO-Bench "
                                f"repository, holding {', '.join(VERSIONS.values())})")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for c in ("Problem ID", "Problem", "Solution", "Grading guidelines"):
            if not (r.get(c) or "").strip():
                raise ValueError(f"{VERSIONS[version]}: row {r.get('Problem ID')!r} has an empty {c!r}")
    return rows


def parse_points(text: str) -> int | None:
    """The first ``<points>N out of 7</points>`` (the judge prompt says the first block counts); None if absent/out of range."""
    m = _POINTS.search(text.rsplit("</think>", 1)[-1])
    if not m or not 0 <= int(m.group(1)) <= 7:
        return None
    return int(m.group(1))


def zero_if_any_zero(grades: list[float]) -> float:
    return 0.0 if any(g == 0 for g in grades) else sum(grades) / len(grades)


def plain_mean(grades: list[float]) -> float:
    return sum(grades) / len(grades)


AGGREGATIONS: dict[str, Callable[[list[float]], float]] = {"zero_if_any_zero": zero_if_any_zero, "mean": plain_mean}


def aggregate(grades: list[float], rule: str) -> float | None:
    if rule not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {rule!r}; choose from {sorted(AGGREGATIONS)}")
    return AGGREGATIONS[rule](grades) if grades else None


def visible_proof(response: Any, thinking: bool | None = True) -> str:
    from recipe.rewards.extract import parse_response
    from recipe.eval.thinking import parse_mode
    parsed = parse_response(response, parse_mode(thinking))
    return (parsed.answer or "").strip()


def grade_proof(row: dict, proof: str, judge: ChatModel, prompt: PromptTemplate, *, samples: int, aggregation: str,
                invalid_grade: str = "skip", judge_sampling: dict | None = None) -> dict:
    """Grade one proof ``samples`` times; returns every grade and the aggregate on 0–7."""
    if not proof:
        return {"score": 0.0, "grades": [], "invalid": 0, "judge_calls": 0, "aggregation": aggregation,
                "detail": "empty proof (reasoning never ended or no text): 0 without a judge call"}
    msgs = prompt.messages(problem=row["Problem"], reference_solution=row["Solution"],
                           rubric=row["Grading guidelines"], predicted_answer=proof)
    grades, raw = [], []
    invalid = 0
    for _ in range(samples):
        try:
            out = judge.complete(msgs, **(judge_sampling or {}))
        except JudgeError as e:
            out = f"[judge request failed: {e}]"
        pts = parse_points(out)
        raw.append({"points": pts, "output": out})
        if pts is None:
            invalid += 1
            if invalid_grade == "zero":
                grades.append(0.0)
        else:
            grades.append(float(pts))
    return {"score": aggregate(grades, aggregation), "grades": raw, "invalid": invalid, "judge_calls": samples,
            "aggregation": aggregation}


def score_proofbench(rows: list[dict], proofs: dict[str, Any], judge: ChatModel, prompt: PromptTemplate, *,
                     samples: int, aggregation: str = "zero_if_any_zero", invalid_grade: str = "skip",
                     thinking: bool | None = True, judge_sampling: dict | None = None,
                     on_item: Callable[[dict], None] | None = None) -> dict:
    """``proofs``: Problem ID → the final proof (response text or message). Score = mean of score/7 (%) ± SE over
    every problem in ``rows`` (a missing or ungraded one is 0)."""
    by_id = {r["Problem ID"]: r for r in rows}
    unknown = [p for p in proofs if p not in by_id]
    if unknown:
        raise ValueError(f"proofs for problems not in the benchmark: {unknown[:5]}")
    items = []
    for pid in by_id:  # every problem of the benchmark, in its order
        level = "Basic" if "Basic" in pid else "Advanced"
        if pid not in proofs:
            item = {"id": pid, "level": level, "proof": None, "score": 0.0, "grades": [], "invalid": 0,
                    "judge_calls": 0, "aggregation": aggregation, "missing": True, "detail": "no proof: 0"}
        else:
            proof = visible_proof(proofs[pid], thinking)
            g = grade_proof(by_id[pid], proof, judge, prompt, samples=samples, aggregation=aggregation,
                            invalid_grade=invalid_grade, judge_sampling=judge_sampling)
            item = {"id": pid, "level": level, "proof": proof} | g
            if item["score"] is None:  # no judge reply carried a grade: 0, counted
                item |= {"score": 0.0, "ungraded": True}
        items.append(item)
        if on_item:
            on_item(item)

    def pct(its):
        return mean_se(100 * it["score"] / 7 for it in its)

    total = pct(items)
    missing = [it["id"] for it in items if it.get("missing")]
    ungraded = [it["id"] for it in items if it.get("ungraded")]
    return {"benchmark": "imo-proofbench", "aggregation": aggregation, "judge_samples": samples,
            "invalid_grade": invalid_grade,
            "score": total["mean"], "se": total["se"], "ci95": total["ci95"], "n": total["n"],
            "points_mean": None if not items else sum(it["score"] for it in items) / len(items),
            "by_level": {lv: pct([it for it in items if it["level"] == lv]) for lv in ("Basic", "Advanced")},
            "ungraded": ungraded, "n_ungraded": len(ungraded),
            "proofs_with_invalid_grades": sum(1 for it in items if it["invalid"]),
            "invalid_grades": sum(it["invalid"] for it in items), "judge_calls": sum(it["judge_calls"] for it in items),
            "missing_problems": missing, "n_missing": len(missing),
            "judge_prompt": {"source": prompt.source, "sha256": prompt.sha256}, "items": items}
