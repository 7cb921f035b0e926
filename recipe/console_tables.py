"""Printing rich tables so that no name is cut. In a terminal, rich fits a table to the window. Written to a log
or a pipe, rich assumes 80 columns and squeezes a wide table's cells to ``sta…``, ``if_…``; there the table is
printed at its natural width instead (a log line may be as long as it needs)."""
from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def print_table(table: Table, console: Console | None = None) -> None:
    console = console or Console()
    if console.is_terminal:
        console.print(table)
        return
    width = Measurement.get(console, console.options.update_width(10_000), table).maximum
    if width > console.width:
        Console(file=console.file, width=width, color_system=console.color_system, force_terminal=False,
                no_color=console.no_color).print(table)
    else:
        console.print(table)
