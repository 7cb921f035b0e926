"""``tool_call`` verifier: parse the model's tool calls and compare them with the expected calls.

Parsed formats: the XML format of the Nemotron/Qwen3-Coder chat template
``<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>`` (one leading and
trailing newline of a value is dropped, as the vLLM ``qwen3_coder`` parser does); the JSON form
``<tool_call>{"name": …, "arguments": {…}}</tool_call>``; and structured calls already split out of the
response (OpenAI ``tool_calls`` / Responses ``function_call`` items, NeMo-Gym xlam/workplace rows).
Comparison: names exactly; arguments as dicts where every string value that parses as JSON is compared
as JSON (so ``"5"`` and ``5`` match, ``"[1, 2]"`` and ``[1, 2]`` match). Reward 1 iff the predicted
calls equal the expected calls as a multiset (``order: exact`` demands the same order); details carry
``num_expected``, ``num_predicted``, ``num_correct`` (NeMo-Gym xlam_fc field names).
Not covered: executing calls against an environment state (NeMo-Gym workplace_assistant compares the
resulting state, see the real-rows test for where that differs).
"""
from __future__ import annotations

import json
import re
from typing import Any

from recipe.rewards.extract import ParsedResponse, maybe_json, parse_response
from recipe.rewards.registry import register
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import FieldError

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*?)(?:</function>|$)", re.DOTALL)
_PARAM = re.compile(r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|$)", re.DOTALL)


def _strip_one_newline(v: str) -> str:
    if v.startswith("\n"):
        v = v[1:]
    if v.endswith("\n"):
        v = v[:-1]
    return v


def parse_xml_tool_calls(text: str) -> list[dict]:
    """Calls in ``text`` as ``[{"name", "arguments": dict}]`` (malformed blocks are skipped).

    >>> parse_xml_tool_calls("<tool_call>\\n<function=add>\\n<parameter=a>\\n1\\n</parameter>\\n</function>\\n</tool_call>")
    [{'name': 'add', 'arguments': {'a': 1}}]
    """
    calls = []
    for block in _TOOL_CALL.findall(text):
        funcs = _FUNCTION.findall(block)
        if funcs:
            for name, body in funcs:
                args = {p.strip(): maybe_json(_strip_one_newline(v)) for p, v in _PARAM.findall(body)}
                calls.append({"name": name.strip(), "arguments": args})
            continue
        obj = maybe_json(block.strip())
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            calls.append({"name": obj["name"], "arguments": maybe_json(obj.get("arguments", obj.get("parameters", {})))})
    return calls


def extract_calls(parsed: ParsedResponse) -> list[dict]:
    calls = [{"name": c["name"], "arguments": maybe_json(c["arguments"])} for c in parsed.tool_calls]
    if parsed.answer:
        calls.extend(parse_xml_tool_calls(parsed.answer))
    return calls


def normalize_value(v: Any) -> Any:
    v = maybe_json(v)
    if isinstance(v, dict):
        return {str(k): normalize_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [normalize_value(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def canonical(call: dict) -> str:
    args = normalize_value(call.get("arguments") or {})
    return json.dumps({"name": call.get("name"), "arguments": args}, sort_keys=True, ensure_ascii=False)


def expected_calls(spec: dict) -> list[dict]:
    for key in ("expected_calls", "expected_answers", "ground_truth"):
        if spec.get(key) is not None:
            calls = spec[key]
            break
    else:
        raise FieldError("missing_field:expected_calls", "verifier field 'expected_calls' is missing")
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls):
        raise FieldError("invalid_field:expected_calls", "expected_calls must be a list of {name, arguments}")
    return calls


@register("tool_call")
def verify_tool_call(record: dict, response: Any) -> VerifierResult:
    spec = record.get("verifier") or {}
    want = expected_calls(spec)
    parsed = parse_response(response, spec.get("mode", record.get("mode")))
    if parsed.answer is None and not parsed.tool_calls:
        return fail("unterminated_think")
    got = extract_calls(parsed)
    want_c = [canonical(c) for c in want]
    got_c = [canonical(c) for c in got]
    remaining = list(want_c)
    correct = 0
    for g in got_c:
        if g in remaining:
            remaining.remove(g)
            correct += 1
    details = {"num_expected": len(want_c), "num_predicted": len(got_c), "num_correct": correct,
               "predicted_calls": [json.loads(g) for g in got_c]}
    if not got:
        return VerifierResult(0.0, "no_tool_call" if want else "correct", details) if want else VerifierResult(1.0, "correct", details)
    if spec.get("order") == "exact":
        passed = got_c == want_c
    else:
        passed = correct == len(want_c) == len(got_c)
    if passed:
        return VerifierResult(1.0, "correct", details)
    names_ok = sorted(json.loads(g)["name"] for g in got_c) == sorted(c["name"] for c in want)
    return VerifierResult(0.0, "wrong_arguments" if names_ok else "wrong_calls", details)
