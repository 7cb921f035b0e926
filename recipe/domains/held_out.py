"""Held out means held out: the prompt a held-out record is judged by never occurs in training.

A record's *prompt* here is its user turns with whitespace collapsed: what the model sees of a task before it answers
(for an agentic record, the issue that opens every episode; later turns are the environment's replies). The data
phase refuses splits in which a report (``val``) or selection (``select``) prompt equals a training prompt of the same
domain, and the dataset card states the count it measured (0)."""
from __future__ import annotations

from typing import Iterable

HELD_OUT_SPLITS = ("val", "select")
# The rule the splits are drawn and checked by, part of the data phase's inputs: a run whose 00_data was written
# under an earlier rule draws and checks its splits again instead of reusing them.
SPLIT_RULE = "held out by split key and user-turn prompt; swe and swe_agentic by repository"


def normalised_prompt(turns: Iterable[tuple[str, str]]) -> str:
    """The user turns of ``[(role, content), ...]``, joined, with every run of whitespace collapsed to one space."""
    return " ".join(" ".join(c or "" for r, c in turns if r == "user").split())


def record_prompt(record: dict) -> str:
    return normalised_prompt((m.get("role"), m.get("content")) for m in record.get("messages", []))


def held_out_overlap(splits: dict[str, dict[str, list[dict]]]) -> dict[str, dict[str, int]]:
    """{domain: {held-out split: records of it whose prompt equals a training prompt of the domain}}."""
    out = {}
    for domain, sp in splits.items():
        train = {record_prompt(r) for r in sp.get("train", [])}
        out[domain] = {s: sum(record_prompt(r) in train for r in sp.get(s, [])) for s in HELD_OUT_SPLITS}
    return out


class HeldOutError(ValueError):
    """A held-out prompt also occurs in training."""


def check_held_out(splits: dict[str, dict[str, list[dict]]]) -> dict[str, dict[str, int]]:
    """Raise ``HeldOutError`` naming each domain (and count) whose report or selection prompts occur in training;
    otherwise return the measured counts (all 0)."""
    overlap = held_out_overlap(splits)
    bad = [f"{d}: {v['val']} report and {v['select']} selection prompt(s)" for d, v in overlap.items() if any(v.values())]
    if bad:
        raise HeldOutError("held-out prompts also occur in training (user turns, whitespace normalised) in "
                           + "; ".join(bad) + ". Fix the domain's split key (recipe/domains) or the curated "
                           "records so that no report or selection prompt is a training prompt.")
    return overlap
