"""Verifiers: pure functions ``(record, response) -> VerifierResult`` behind one registry.

Public API: ``verify``, ``verify_batch``, ``VerifierResult``, ``get_verifier``, ``verifier_names``,
``check_verifier_names``, ``UnknownVerifierError``. Registry names (records' ``verifier.name``): ``math``,
``mcqa``, ``instruction_following``, ``structured_output``, ``tool_call``, ``code``; the pairwise judges
live in ``recipe.rewards.pairwise_judges``. Field specs: ``recipe.rewards.spec``. Model-written code only ever runs
through ``recipe.sandbox``.
"""
from recipe.rewards.batch import verify_batch
from recipe.rewards.core import verify
from recipe.rewards.verifier_registry import UnknownVerifierError, check_verifier_names, get_verifier, verifier_names
from recipe.rewards.result import VerifierResult

# The built-in verifiers: importing a module registers its names (recipe.rewards.verifier_registry.register).
from recipe.rewards import (  # noqa: F401
    chat_rubric,
    code_verifier,
    exact_match,
    instruction_following,
    math_verifier,
    pairwise_judges,
    mcqa,
    structured_output,
    swe,
    tool_call,
    unit_tests,
)

__all__ = [
    "UnknownVerifierError",
    "VerifierResult",
    "check_verifier_names",
    "get_verifier",
    "verifier_names",
    "verify",
    "verify_batch",
]
