"""``structured_output`` verifier: the answer must parse (JSON / YAML / TOML) and validate against a JSON Schema.

Validation uses ``jsonschema`` (the maintained reference library) with the validator class the schema
declares (``$schema``; Draft 2020-12 by default) and format checking off, as NeMo-Gym does. An invalid
schema is a bad record field (``invalid_field:schema_str``, score 0, the batch goes on). A single fenced
block (```json … ```) is unwrapped before parsing (``allow_code_fence``, default true; set false to demand
bare output). With ``response_mode: tool_call`` (NeMo-Gym v4 rows) the payload is the arguments of the
call named ``tool_name`` (under ``tool_payload_key`` when given).
"""
from __future__ import annotations

import functools
import json
import tomllib
from typing import Any

from recipe.rewards.extract import maybe_json, parse_response, strip_code_fence
from recipe.rewards.verifier_registry import register
from recipe.rewards.result import VerifierResult, fail, ok
from recipe.rewards.spec import require


@functools.lru_cache(maxsize=256)
def _validator_for_text(schema_str: str):
    schema = load_schema(schema_str)
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)


def validator(schema_str: Any):
    """A compiled validator; schemas given as text are cached (every rollout of a prompt shares one)."""
    if isinstance(schema_str, str):
        return _validator_for_text(schema_str)
    import jsonschema

    schema = load_schema(schema_str)
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)


def load_schema(schema_str: Any) -> dict:
    schema = json.loads(schema_str) if isinstance(schema_str, str) else schema_str
    if not isinstance(schema, dict):
        raise ValueError("schema must be a JSON object")
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return schema


def parse_payload(text: str, schema_type: str) -> Any:
    if schema_type == "json":
        return json.loads(text)
    if schema_type == "yaml":
        import yaml

        return yaml.safe_load(text)
    if schema_type == "toml":
        return tomllib.loads(text)
    raise ValueError(f"unsupported schema_type {schema_type!r}")


@register("structured_output")
def verify_structured_output(record: dict, response: Any) -> VerifierResult:
    import jsonschema

    spec = record.get("verifier") or {}
    schema_str = require(spec, "schema_str", (str, dict))
    schema_type = str(spec.get("schema_type") or "json").lower()
    if schema_type not in ("json", "yaml", "toml"):
        return fail("invalid_field:schema_type", schema_type=schema_type)
    try:
        compiled = validator(schema_str)
    except (ValueError, jsonschema.exceptions.SchemaError) as e:
        return fail("invalid_field:schema_str", error=str(e)[:300])
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None:
        return fail("unterminated_think")
    if spec.get("response_mode") == "tool_call":
        from recipe.rewards.tool_call import extract_calls

        name = spec.get("tool_name")
        calls = [c for c in extract_calls(parsed) if name is None or c["name"] == name]
        if not calls:
            return fail("no_answer", expected_tool=name)
        payload = calls[-1]["arguments"]
        key = spec.get("tool_payload_key")
        if key and isinstance(payload, dict) and key in payload:
            payload = maybe_json(payload[key])
    else:
        text = parsed.answer.strip()
        if spec.get("allow_code_fence", True):
            text = strip_code_fence(text)
        if not text:
            return fail("no_answer")
        try:
            payload = parse_payload(text, schema_type)
        except Exception as e:  # json/yaml/toml each raise their own error types
            return fail("parse_error", schema_type=schema_type, error=str(e)[:200])
    errors = sorted(compiled.iter_errors(payload), key=lambda e: list(e.absolute_path))
    if errors:
        return fail("schema_violation", n_errors=len(errors), first_error=errors[0].message[:300],
                    path="/".join(map(str, errors[0].absolute_path)))
    return ok(schema_type=schema_type)
