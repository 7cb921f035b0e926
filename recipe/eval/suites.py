"""Suite registry: a benchmark = its rows, its prompt, its per-sample scorer and its aggregate.

A ``Suite`` scores one sample of one row with ``score(row, response, thinking) -> Verdict`` (``thinking``: True when
the response was generated in thinking mode, so text before ``</think>`` is never graded; False without thinking;
None = auto, for responses from any system -- ``recipe.eval.thinking``); rows carry the benchmark's own
fields (``required_fields``; ``id_field`` names the item). ``summarize`` adds suite-specific metrics to the
generic avg@k / pass@k summary (IFEval: prompt/instruction level strict and loose; ArenaHard: win rate + bootstrap
CI). Suites register themselves on import (``register_suite``); ``get_suite`` loads the built-in modules and the
olympiad suites (``recipe.eval.olympiad``, when present) first. An unknown name is an error listing the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from recipe.eval.sampling import SamplingParams

Verdict = dict  # {"score": float in [0, 1], "no_answer": bool, "reason": str, ...suite-specific fields}


class UnknownSuiteError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class RowError(ValueError):
    """A row lacks a field the suite needs, or holds a value of the wrong type (reported with its line, not scored)."""


@dataclass
class Suite:
    name: str
    description: str
    id_field: str
    required_fields: tuple[str, ...]
    messages: Callable[[dict, bool], list[dict]]  # (row, thinking) -> chat messages for generation
    score: Callable[[dict, Any, bool | None], Verdict]  # (row, response, thinking on/off/auto) -> one sample's verdict
    defaults: SamplingParams = field(default_factory=SamplingParams)
    scorer_version: str = "1"
    metric: str = "accuracy"
    judge: str | None = None
    summarize: Callable[[dict[str, list[Verdict]]], dict] | None = None
    adapt_rows: Callable[[list[dict]], list[dict]] | None = None  # Hub rows in another layout -> this suite's rows
    tools: Callable[[dict], list | None] | None = None  # (row) -> tool schemas offered to the model
    execution: str = "local"  # "local" or a note on what scoring needs at scale (e.g. per-instance containers)

    def check_row(self, row: Any) -> str:
        """The row's item id; ``RowError`` when the row is not a mapping with the required fields."""
        if not isinstance(row, dict):
            raise RowError(f"row must be a JSON object, got {type(row).__name__}")
        missing = [f for f in (self.id_field, *self.required_fields) if f not in row]
        if missing:
            raise RowError(f"missing field(s) {missing} (suite {self.name} needs {[self.id_field, *self.required_fields]})")
        return str(row[self.id_field])


_SUITES: dict[str, Suite] = {}


def register_suite(suite: Suite) -> Suite:
    if suite.name in _SUITES and _SUITES[suite.name] is not suite:
        raise ValueError(f"suite {suite.name!r} registered twice")
    _SUITES[suite.name] = suite
    return suite


def get_suite(name: str) -> Suite:
    _load_builtin()
    if name.startswith("tiny_") and name not in _SUITES and len(name) > 5:
        from recipe.eval.tiny_suites import register_tiny_domain
        register_tiny_domain(name.removeprefix("tiny_"))  # any tiny domain; its rows come from the run
    try:
        return _SUITES[name]
    except KeyError:
        raise UnknownSuiteError(f"unknown suite {name!r}; known suites: {', '.join(sorted(_SUITES))}") from None


def suite_names() -> list[str]:
    _load_builtin()
    return sorted(_SUITES)


# Each module registers its suites on import; recipe.eval.olympiad registers imo-answer, imo-proof, ioi and icpc.
BUILTIN_MODULES = ("math_suites", "ifeval_suites", "code_suites", "arena_hard", "agentic_suites", "tiny_suites",
                   "olympiad")
_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for mod in BUILTIN_MODULES:
        importlib.import_module(f"recipe.eval.{mod}")
