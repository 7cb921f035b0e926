"""The tiny domains as suites (``tiny_math``, ``tiny_instruction_following``, ``tiny_mcqa``, ``tiny_tool_call``):
rows in the project's record format (``id``, ``messages``, ``tools``, ``verifier``), graded by the same verifiers as
training (``recipe.rewards``), so ``recipe eval`` on them agrees with validation. The rows are a run's held-out
validation split (``recipe.domains.data_phase.load_splits``)."""
from __future__ import annotations

from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_family, register_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.thinking import parse_mode
from recipe.rewards.extract import BadResponse

TINY_DOMAINS = ("math", "instruction_following", "mcqa", "tool_call")


def _messages(row: dict, thinking: bool) -> list[dict]:
    if not isinstance(row.get("messages"), list):
        raise RowError("field 'messages' must be a list of chat messages")
    return row["messages"]


def _score(row: dict, response, thinking: bool | None) -> dict:
    from recipe.rewards import get_verifier
    from recipe.rewards.verifier_registry import UnknownVerifierError
    spec = row.get("verifier")
    if not isinstance(spec, dict) or "name" not in spec:
        raise RowError("field 'verifier' must be an object with a 'name'")
    try:
        fn = get_verifier(spec["name"])
    except UnknownVerifierError as e:
        raise RowError(str(e)) from None
    try:
        r = fn(dict(row, mode=parse_mode(thinking)), response)  # on / off / auto (recipe.eval.thinking)
    except BadResponse as e:
        raise RowError(f"response: {e}") from None
    no_answer = r.reason in ("unterminated_think", "no_answer", "bad_response")
    return {"score": float(r.score), "no_answer": no_answer, "reason": r.reason,
            "extracted": (r.details or {}).get("extracted")}


def tiny_suite_name(domain: str) -> str:
    return f"tiny_{domain}"


def register_tiny_domain(domain: str) -> Suite:
    return register_suite(Suite(
        name=tiny_suite_name(domain), description=f"tiny {domain} validation rows, graded by the training verifier",
        id_field="id", required_fields=("messages", "verifier"), messages=_messages, score=_score,
        defaults=SamplingParams(temperature=1.0, top_p=1.0, max_tokens=40, thinking=True, k=2),
        scorer_version="recipe.rewards", tools=lambda row: row.get("tools")))


for _d in TINY_DOMAINS:
    register_tiny_domain(_d)
register_family("tiny_", register_tiny_domain)  # any other tiny domain, on first use
