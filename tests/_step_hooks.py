"""Hooks on a stage's metrics rows for the resume tests: kill the stage right after a given step is logged (before
its state is saved, as SIGKILL would), or record which steps a re-run actually runs."""
from __future__ import annotations


class Killed(BaseException):
    """Stands in for SIGKILL: raised right after a step's metrics row is written, before its state is saved."""


def die_after_step(monkeypatch, run, step: int) -> None:
    append = type(run).append_metrics

    def append_then_die(self, stage_name, row):
        append(self, stage_name, row)
        if row["step"] == step:
            raise Killed

    monkeypatch.setattr(type(run), "append_metrics", append_then_die)


def record_steps(monkeypatch, run) -> list[int]:
    """The steps whose rows the run writes from now on, in order."""
    ran: list[int] = []
    append = type(run).append_metrics

    def counting_append(self, stage_name, row):
        ran.append(row["step"])
        append(self, stage_name, row)

    monkeypatch.setattr(type(run), "append_metrics", counting_append)
    return ran
