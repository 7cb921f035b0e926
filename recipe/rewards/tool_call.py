"""``tool_call`` verifier: parse the model's tool calls and compare them with the expected calls.

Parsed formats: the XML format of the Nemotron/Qwen3-Coder chat template
``<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>`` (one leading and
trailing newline of a value is dropped, as the vLLM ``qwen3_coder`` parser does); the JSON form
``<tool_call>{"name": …, "arguments": {…}}</tool_call>``; and structured calls already split out of the
response (OpenAI ``tool_calls`` / Responses ``function_call`` items, NeMo-Gym xlam/workplace rows).
Comparison: names exactly; arguments given as a JSON string are parsed first; typed JSON values compare
exactly (``"14"`` ≠ ``14`` for OpenAI-style calls, as NeMo-Gym xlam_fc scores them); XML parameter values
are text, so they match when their JSON reading or raw text equals the expected value (``3`` matches
``"3"`` and ``3``; ``[1, 2]`` matches a list). Reward 1 iff the predicted
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
from recipe.rewards.verifier_registry import register
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
    [{'name': 'add', 'arguments': {'a': '1'}, 'xml': True}]
    """
    calls = []
    for block in _TOOL_CALL.findall(text):
        funcs = _FUNCTION.findall(block)
        if funcs:
            for name, body in funcs:
                args = {p.strip(): _strip_one_newline(v) for p, v in _PARAM.findall(body)}
                calls.append({"name": name.strip(), "arguments": args, "xml": True})
            continue
        obj = maybe_json(block.strip())
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            calls.append({"name": obj["name"], "arguments": maybe_json(obj.get("arguments", obj.get("parameters", {})))})
    return calls


def extract_calls(parsed: ParsedResponse) -> list[dict]:
    calls = [{"name": c["name"], "arguments": _args(c)} for c in parsed.tool_calls]
    if parsed.answer:
        calls.extend(parse_xml_tool_calls(parsed.answer))
    return calls


def _num(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def values_match(want: Any, got: Any, from_xml: bool) -> bool:
    """Typed JSON values compare exactly (``"14"`` ≠ ``14`` in OpenAI-style calls); an XML parameter value is
    text, so it also matches when its JSON reading or its raw text equals the expected value."""
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(values_match(want[k], got[k], from_xml) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(values_match(a, b, from_xml) for a, b in zip(want, got))
    if _num(want) == _num(got) and type(_num(want)) is type(_num(got)):
        return True
    if from_xml and isinstance(got, str):
        parsed = maybe_json(got)
        if parsed is not got and values_match(want, parsed, False):
            return True
        return isinstance(want, (int, float)) and not isinstance(want, bool) and got.strip() == json.dumps(want)
    return False


def _args(call: dict) -> Any:
    a = call.get("arguments")
    if a is None:
        return {}
    return maybe_json(a) if isinstance(a, str) else a


def call_matches(want: dict, got: dict) -> bool:
    return want.get("name") == got.get("name") and values_match(_args(want), _args(got), bool(got.get("xml")))


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
    remaining = list(range(len(want)))
    correct = 0
    matched_in_order = len(got) == len(want) and all(call_matches(w, g) for w, g in zip(want, got))
    for g in got:
        j = next((j for j in remaining if call_matches(want[j], g)), None)
        if j is not None:
            remaining.remove(j)
            correct += 1
    details = {"num_expected": len(want), "num_predicted": len(got), "num_correct": correct,
               "predicted_calls": [{"name": g["name"], "arguments": _args(g)} for g in got]}
    if not got:
        return VerifierResult(0.0, "no_tool_call" if want else "correct", details) if want else VerifierResult(1.0, "correct", details)
    passed = matched_in_order if spec.get("order") == "exact" else correct == len(want) == len(got)
    if passed:
        return VerifierResult(1.0, "correct", details)
    names_ok = sorted(str(g["name"]) for g in got) == sorted(c["name"] for c in want)
    return VerifierResult(0.0, "wrong_arguments" if names_ok else "wrong_calls", details)
