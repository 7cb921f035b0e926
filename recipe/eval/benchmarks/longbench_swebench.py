"""Long context (LongBench v2) and SWE-bench Verified: loaders and scorer interfaces.

``longbench_v2``: rows of ``THUDM/LongBench-v2`` (``_id``, ``context``, ``question``, ``choice_A``..``choice_D``,
``answer`` letter); prompt = context + question + choices, answer "The correct answer is (X)" (LongBench v2's own
format; a final ``\\boxed{X}`` is also accepted); scored by exact letter match, avg@k (paper: avg@4, thinking).

``swebench_verified``: rows of ``princeton-nlp/SWE-bench_Verified`` (``instance_id``, ``repo``, ``base_commit``,
``problem_statement``, ``FAIL_TO_PASS``, ``PASS_TO_PASS`` ...). The response's patch (last fenced ``diff`` block, or
the text from the first ``diff --git``) is checked for well-formedness here; whether it RESOLVES the instance needs
the instance's own container (the SWE-bench harness image: repo at ``base_commit``, its environment, FAIL_TO_PASS
and PASS_TO_PASS run) -- execution at scale only. Plug one in with ``set_swebench_executor(fn)``,
``fn(row, patch) -> {"resolved": bool, ...}``; without one, scoring raises ``ExecutionUnavailable`` saying so.
The paper evaluates SWE-bench with OpenHands, non-thinking, <= 200 turns, avg@4 (EVAL.md §2).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.rewards.extract import BadResponse, last_boxed, parse_response

# --- LongBench v2 ------------------------------------------------------------------------------------------
LB_PROMPT = ("Please read the following text and answer the question below.\n\n<text>\n{context}\n</text>\n\n"
             "What is the correct answer to this question: {question}\nChoices:\n(A) {choice_A}\n(B) {choice_B}\n"
             "(C) {choice_C}\n(D) {choice_D}\n\nFormat your response as follows: \"The correct answer is (insert answer "
             "here)\".")
_LB_ANSWER = re.compile(r"The correct answer is \(?([ABCD])\)?")


def _answer_text(response: Any, thinking: bool):
    try:
        return parse_response(response, "thinking" if thinking else None).answer
    except BadResponse as e:
        raise RowError(f"response: {e}") from None


def score_longbench(row: dict, response: Any, thinking: bool) -> dict:
    gold = str(row["answer"]).strip().upper()
    if gold not in ("A", "B", "C", "D"):
        raise RowError(f"field 'answer' must be a letter A-D, got {row['answer']!r}")
    text = _answer_text(response, thinking)
    if text is None:
        return {"score": 0.0, "no_answer": True, "reason": "unclosed_think", "extracted": None}
    found = _LB_ANSWER.findall(text)
    pred = found[-1] if found else (last_boxed(text) or "").strip("() ").upper() or None
    if pred not in ("A", "B", "C", "D"):
        return {"score": 0.0, "no_answer": True, "reason": "no_letter", "extracted": None}
    return {"score": float(pred == gold), "no_answer": False, "reason": "correct" if pred == gold else "wrong",
            "extracted": pred}


register_suite(Suite(
    name="longbench_v2", description="LongBench v2 (503 long-context MCQ), letter match",
    id_field="_id", required_fields=("context", "question", "choice_A", "choice_B", "choice_C", "choice_D", "answer"),
    messages=lambda row, thinking: [{"role": "user", "content": LB_PROMPT.format(**{k: row[k] for k in (
        "context", "question", "choice_A", "choice_B", "choice_C", "choice_D")})}],
    score=score_longbench, defaults=SamplingParams(temperature=1.0, top_p=0.95, max_tokens=131072, thinking=True, k=4),
    scorer_version="longbench-v2-letter-1"))


# --- SWE-bench Verified ------------------------------------------------------------------------------------
class ExecutionUnavailable(RuntimeError):
    """Scoring needs infrastructure that is not here (SWE-bench: the instance's container)."""


_EXECUTOR: dict[str, Callable[[dict, str], dict] | None] = {"fn": None}
_FENCED_DIFF = re.compile(r"```(?:diff|patch)[ \t]*\n(.*?)```", re.S)


def set_swebench_executor(fn: Callable[[dict, str], dict] | None) -> None:
    _EXECUTOR["fn"] = fn


def extract_patch(text: str) -> str | None:
    blocks = _FENCED_DIFF.findall(text)
    if blocks:
        return blocks[-1]
    i = text.find("diff --git ")
    return text[i:] if i >= 0 else None


def patch_problems(patch: str) -> list[str]:
    """Structural problems of a unified diff (empty list = well-formed): file headers and hunk line counts."""
    problems = []
    files = re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, re.M)
    if not files:
        return ["no 'diff --git a/... b/...' header"]
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", lines[i])
        if not m:
            i += 1
            continue
        old, new = int(m.group(1) or 1), int(m.group(2) or 1)
        i += 1
        while (old > 0 or new > 0) and i < len(lines):
            ln = lines[i]
            if ln.startswith("\\"):
                i += 1
                continue
            tag = ln[:1]
            if tag in (" ", ""):
                old, new = old - 1, new - 1
            elif tag == "-":
                old -= 1
            elif tag == "+":
                new -= 1
            else:
                break
            i += 1
        if old != 0 or new != 0:
            problems.append(f"hunk shorter than its header says near line {i}")
        elif i < len(lines) and lines[i][:1] in ("+", "-", " ") and not lines[i].startswith(("--- ", "+++ ")):
            problems.append(f"hunk longer than its header says at line {i + 1}")
    return problems


def score_swebench(row: dict, response: Any, thinking: bool) -> dict:
    text = _answer_text(response, thinking)
    if text is None:
        return {"score": 0.0, "no_answer": True, "reason": "unclosed_think"}
    patch = extract_patch(text)
    if not patch:
        return {"score": 0.0, "no_answer": True, "reason": "no_patch"}
    problems = patch_problems(patch)
    if problems:
        return {"score": 0.0, "no_answer": False, "reason": "malformed_patch", "problems": problems}
    fn = _EXECUTOR["fn"]
    if fn is None:
        raise ExecutionUnavailable(
            f"{row['instance_id']}: resolving needs the instance's container (SWE-bench harness image for "
            f"{row.get('repo')} at {row.get('base_commit', '?')[:12]}, FAIL_TO_PASS + PASS_TO_PASS); run at scale "
            "with an executor (set_swebench_executor)")
    res = fn(row, patch)
    return {"score": float(bool(res.get("resolved"))), "no_answer": False,
            "reason": "resolved" if res.get("resolved") else "unresolved", **{k: v for k, v in res.items() if k != "resolved"}}


register_suite(Suite(
    name="swebench_verified", description="SWE-bench Verified (500): patch extraction here; resolution needs "
                                          "per-instance containers (at scale)",
    id_field="instance_id", required_fields=("repo", "base_commit", "problem_statement"),
    messages=lambda row, thinking: [{"role": "user", "content": row["problem_statement"]}],
    score=score_swebench, defaults=SamplingParams(temperature=1.0, top_p=0.95, max_tokens=65536, thinking=False, k=4),
    scorer_version="swebench-patch-1", execution="per-instance containers (SWE-bench harness images) at scale"))
