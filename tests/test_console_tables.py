"""Tables printed to a log (not a terminal) keep every stage and domain name whole."""
from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from recipe.console_tables import print_table

NAMES = ["multi_domain_rl", "long_context_rl", "instruction_following", "structured_output", "swe_agentic"]


def _wide_table() -> Table:
    t = Table(title="scores")
    t.add_column("stage")
    for d in NAMES:
        t.add_column(d, justify="right")
    t.add_row("rlhf_branch (from sft)", *["12.3*"] * len(NAMES))
    return t


def test_a_log_gets_the_whole_names():
    buf = io.StringIO()
    print_table(_wide_table(), Console(file=buf, width=80, force_terminal=False))
    out = buf.getvalue()
    assert "…" not in out
    for name in NAMES + ["rlhf_branch (from sft)"]:
        assert name in out


def test_a_narrow_terminal_keeps_rich_fitting():
    buf = io.StringIO()
    print_table(_wide_table(), Console(file=buf, width=80, force_terminal=True, color_system=None))
    assert max(len(line) for line in buf.getvalue().splitlines()) <= 80
