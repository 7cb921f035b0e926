"""``swe_patch`` verifier (agentless SWE, RECIPE.md §4.1 row 7a): apply the response's edit (SEARCH/REPLACE blocks
or a unified diff, ``recipe.rewards.edits``) to an in-memory copy of the record's repository, write the copy into a
fresh sandbox work dir and run the hidden tests there (``recipe.rewards.pytests``). Reward 1 only if every test
passes. A malformed edit is reward 0 with its reason (``no_edit``, ``malformed_edit``, ``search_not_found``,
``path_outside_repo`` ...), never an exception. The paper grades agentless repairs with an LLM judge (GPT-OSS-120B);
on the cluster backend the stage runs NeMo-Gym's ``swerl_llm_judge``, which at the pinned Gym commit scores the
``<solution>`` choice and calls no model (docs/RUN_AT_SCALE.md).

Spec fields: ``files`` ({path: text}), ``tests`` ({file: source}), ``path`` (file an unnamed block edits),
``time_limit_s``, ``memory_mb``.
"""
from __future__ import annotations

from typing import Any

from recipe.rewards.edits import EditError, apply_edit
from recipe.rewards.extract import parse_response
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import FieldError, require
from recipe.rewards.unit_tests import grade, test_files


def repo_files(spec: dict) -> dict[str, str]:
    files = require(spec, "files", dict)
    if not files or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise FieldError("invalid_field:files", "files must map paths to text")
    return files


@register("swe_patch")
def verify_swe_patch(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    files = repo_files(spec)
    test_files(spec)
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    try:
        edited, fmt = apply_edit(parsed.answer, files, spec.get("path"))
    except EditError as e:
        return fail(e.reason, error=str(e)[:200])
    return grade(edited, spec, {"edit_format": fmt})


verify_swe_patch.sandboxed = True  # type: ignore[attr-defined]
