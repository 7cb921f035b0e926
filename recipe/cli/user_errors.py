"""How a command reports a mistake the user can fix: ``error: <cause and fix>`` on the command's own console and an
exit code, never a traceback. Exit 2 is a usage, config or input problem; 3 is a Hub that cannot be reached.

Each command module binds these to its console (stdout for most, stderr where stdout carries JSON).
"""
from __future__ import annotations

import contextlib
from typing import Iterator, NoReturn

import typer
from rich.console import Console


def fail(console: Console, msg: str, code: int = 2) -> NoReturn:
    """Print ``error: msg`` on ``console`` and exit with ``code``."""
    console.print(f"[bold red]error:[/] {msg}")
    raise typer.Exit(code)


def error_message(e: BaseException) -> str:
    """What ``e`` says: a KeyError's own message, not ``str(e)``'s quoted repr of it."""
    return e.args[0] if isinstance(e, KeyError) and e.args else str(e)


@contextlib.contextmanager
def user_errors(console: Console, *caught: type[BaseException], code: int = 2) -> Iterator[None]:
    """Any of ``caught`` raised in the block -> its message and exit ``code``. An exit already decided in the block
    (``typer.Exit``, which is a RuntimeError) goes through unchanged."""
    try:
        yield
    except typer.Exit:
        raise
    except caught as e:
        fail(console, error_message(e), code)


@contextlib.contextmanager
def hub_errors(console: Console) -> Iterator[None]:
    """A Hub failure -> its message and exit 3 when the Hub cannot be reached, 2 for any other Hub error."""
    from recipe.hub.hub_errors import HubError, HubUnreachableError

    with user_errors(console, HubError), user_errors(console, HubUnreachableError, code=3):
        yield
