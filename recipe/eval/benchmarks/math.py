"""AIME 2025 and HMMT Feb 2025: answer-type math, graded on the last ``\\boxed{}`` of the answer (EVAL.md §3) as
NeMo-Skills' math grader grades it (``recipe.eval.benchmarks.math_grading``; its deliberate deviations are listed
there and in docs/EVAL_HARNESS.md).

The answer text follows the thinking rule (``recipe.eval.thinking``): ``thinking=True`` (generated in thinking mode)
grades only the text after the last ``</think>`` and none when it never closed -- never a ``\\boxed`` mined from
unfinished reasoning; ``False`` grades the whole text; ``None`` (auto, ``recipe eval score``'s default) removes a
closed think block, treats an unclosed one as no answer and grades a text without think tags whole. Reported: avg@k
± SE, pass@k, no-answer rate; each sample's extracted answer is kept.

Rows: ``aime25`` = NeMo-Skills' ``test.txt`` format (``id``, ``problem``, ``expected_answer``); ``hmmt_feb25`` =
MathArena's format (``problem_idx``, ``problem``, ``answer``; answers are LaTeX strings, one is a two-value list).
"""
from __future__ import annotations

from typing import Any

from recipe.eval.benchmarks.math_grading import equivalent, final_boxed
from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.thinking import parse_mode
from recipe.rewards.extract import BadResponse, parse_response

SYSTEM_PROMPT = "You are a helpful and harmless assistant.\n\nYou are not allowed to use any tools"  # EVAL.md §1
MATH_PROMPT = ("Solve the following math problem. Make sure to put the answer (and only answer) inside \\boxed{{}}."
               "\n\n{problem}")  # NeMo-Skills generic/math (EVAL.md §1)


def score_math(gold: str, response: Any, thinking: bool | None) -> dict:
    """One sample's verdict. ``thinking``: True (on), False (off) or None (auto), see ``recipe.eval.thinking``."""
    try:
        parsed = parse_response(response, parse_mode(thinking))
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None:
        return {"score": 0.0, "no_answer": True, "reason": "unclosed_think", "extracted": None}
    pred = final_boxed(parsed.answer)
    if pred is None:
        return {"score": 0.0, "no_answer": True, "reason": "no_boxed", "extracted": None}
    ok, how = equivalent(gold, pred)
    return {"score": 1.0 if ok else 0.0, "no_answer": False, "reason": "correct" if ok else "wrong", "extracted": pred,
            "check": how}


def _gold(row: dict, field: str) -> str:
    g = row[field]
    if isinstance(g, bool) or not isinstance(g, (str, int, float)) or not str(g).strip():
        raise RowError(f"field {field!r} must be a non-empty answer string, got {g!r}")
    return str(g)


def math_messages(row: dict, thinking: bool) -> list[dict]:
    if not isinstance(row.get("problem"), str):
        raise RowError("field 'problem' must be a string")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": MATH_PROMPT.format(problem=row["problem"])}]


# Defaults: EVAL.md §2 (AIME/HMMT: T 1.0, top-p 1.0, avg@64 at 131K tokens in the paper; avg@8 in CI).
PAPER_MATH = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=131072, thinking=True, k=8)

def matharena_to_nemo_skills(rows: list[dict]) -> list[dict]:
    """MathArena's Hub layout (``problem_idx`` 1..30, ``answer``) -> NeMo-Skills' (``id`` aime25-0.., ``expected_answer``);
    rows already in NeMo-Skills' layout pass unchanged."""
    out = []
    for r in rows:
        if "expected_answer" in r or "problem_idx" not in r:
            out.append(r)
        else:
            out.append({"id": f"aime25-{int(r['problem_idx']) - 1}", "problem": r["problem"],
                        "expected_answer": str(r["answer"])})
    return out


register_suite(Suite(
    name="aime25", adapt_rows=matharena_to_nemo_skills, description="AIME 2025 I+II (30), last \\boxed{}, NeMo-Skills math grader",
    id_field="id", required_fields=("problem", "expected_answer"), messages=math_messages,
    score=lambda row, resp, thinking: score_math(_gold(row, "expected_answer"), resp, thinking),
    defaults=PAPER_MATH, scorer_version="math-nemo-skills-1"))

register_suite(Suite(
    name="hmmt_feb25", description="HMMT February 2025 (30), last \\boxed{}, NeMo-Skills math grader",
    id_field="problem_idx", required_fields=("problem", "answer"), messages=math_messages,
    score=lambda row, resp, thinking: score_math(_gold(row, "answer"), resp, thinking),
    defaults=PAPER_MATH, scorer_version="math-nemo-skills-1"))
