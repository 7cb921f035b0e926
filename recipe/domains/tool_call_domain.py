"""Tiny tool calling: choose the right tool and arguments, emitted in the model's XML tool-call format
(``<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>``, RECIPE.md §2); graded by
the ``tool_call`` verifier against the expected call. Tools are declared in the system prompt (``<tools>``)."""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example

CITIES = ("paris", "rome", "oslo", "lima", "cairo", "tokyo", "delhi", "quito", "seoul", "dakar",
          "berlin", "madrid", "dublin", "vienna", "prague", "sofia", "riga", "accra", "hanoi", "perth",
          "lagos", "nairobi", "lisbon", "athens", "warsaw", "kyiv", "minsk", "baku", "doha", "dubai",
          "tunis", "rabat", "bogota", "havana", "manila", "taipei", "osaka", "sydney", "denver", "boston")


def _tool(name: str, desc: str, params: dict[str, str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": desc,
        "parameters": {"type": "object", "properties": {p: {"type": t} for p, t in params.items()},
                       "required": list(params)}}}


TOOLS = (
    _tool("get_weather", "forecast", {"city": "string", "days": "integer"}),
    _tool("get_time", "time", {"city": "string"}),
    _tool("set_alarm", "alarm", {"hour": "integer", "minute": "integer"}),
)


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    kind = rng.choice(("get_weather", "get_time", "set_alarm"))
    if kind == "set_alarm":
        h, m = rng.randint(0, 23), rng.choice((0, 15, 30, 45))
        q, args = f"Set an alarm for {h}:{m:02d}.", {"hour": h, "minute": m}
    elif kind == "get_weather":
        c, d = rng.choice(CITIES), rng.randint(1, 7)
        q, args = f"Weather in {c} for {d} days?", {"city": c, "days": d}
    else:
        c = rng.choice(CITIES)
        q, args = f"What time is it in {c}?", {"city": c}
    call = {"type": "function", "function": {"name": kind, "arguments": args}}
    return Example(prompt=(("user", q),),
                   verifier={"name": "tool_call", "expected_calls": [{"name": kind, "arguments": args}]},
                   reasoning=f"use {kind}", content="", tool_calls=(call,), tools=TOOLS)
