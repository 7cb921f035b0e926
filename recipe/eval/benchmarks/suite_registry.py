"""Suite registry: a benchmark = its rows, its prompt, its per-sample scorer and its aggregate.

A ``Suite`` scores one sample of one row with ``score(row, response, thinking) -> Verdict`` (``thinking``: True when
the response was generated in thinking mode, so text before ``</think>`` is never graded; False without thinking;
None = auto, for responses from any system -- ``recipe.eval.thinking``); rows carry the benchmark's own
fields (``required_fields``; ``id_field`` names the item). ``summarize`` adds suite-specific metrics to the
generic avg@k / pass@k summary (IFEval: prompt/instruction level strict and loose; ArenaHard: win rate + bootstrap
CI). Suites register themselves on import (``register_suite``); the package ``recipe.eval.benchmarks`` imports every
built-in module, so this registry imports none of them. An unknown name is an error listing the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from recipe.eval.sampling_settings import SamplingParams

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
    # an episode suite: a sample is a whole tool loop against an environment, played through the backend turn by
    # turn -- (jobs, rows by item id, backend, sampling) -> (job, Generation with ``episode``) as each ends; its
    # ``score`` then reads the episode (``Generation.episode``), not a response
    play: Callable[[list, dict, Any, SamplingParams], Any] | None = None

    def check_row(self, row: Any) -> str:
        """The row's item id; ``RowError`` when the row is not a mapping with the required fields."""
        if not isinstance(row, dict):
            raise RowError(f"row must be a JSON object, got {type(row).__name__}")
        missing = [f for f in (self.id_field, *self.required_fields) if f not in row]
        if missing:
            raise RowError(f"missing field(s) {missing} (suite {self.name} needs {[self.id_field, *self.required_fields]})")
        return str(row[self.id_field])


_SUITES: dict[str, Suite] = {}
_FAMILIES: dict[str, Callable[[str], Suite]] = {}


def register_suite(suite: Suite) -> Suite:
    if suite.name in _SUITES and _SUITES[suite.name] is not suite:
        raise ValueError(f"suite {suite.name!r} registered twice")
    _SUITES[suite.name] = suite
    return suite


def register_family(prefix: str, make: Callable[[str], Suite]) -> None:
    """Suites made on first use: ``get_suite(prefix + rest)`` calls ``make(rest)`` when no suite of that name is
    registered (``tiny_<domain>``: any tiny domain, its rows come from the run)."""
    _FAMILIES[prefix] = make


def get_suite(name: str) -> Suite:
    if name not in _SUITES:
        for prefix, make in _FAMILIES.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                make(name.removeprefix(prefix))
                break
    try:
        return _SUITES[name]
    except KeyError:
        raise UnknownSuiteError(f"unknown suite {name!r}; known suites: {', '.join(sorted(_SUITES))}") from None


def suite_names() -> list[str]:
    return sorted(_SUITES)
