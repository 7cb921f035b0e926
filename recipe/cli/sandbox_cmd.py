"""``recipe sandbox``: run a program in the sandbox and print one JSON verdict.

    recipe sandbox run --time-limit 2 --memory-mb 256 --stdin in.txt -- python solution.py
    recipe sandbox run --time-limit 30 --memory-mb 2048 --output-dir build -- g++ -O2 main.cpp -o main
    recipe sandbox run --time-limit 1 --memory-mb 256 --stdin in.txt -- ./build/main
    recipe sandbox check            # is isolation available here, and how

Host files named in the command are copied into the run's private work dir (and referred to by their
base name); ``python`` means the system ``python3``. ``--output-dir`` copies files the program created
back (e.g. a compiled binary). Verdict fields: status (ok | timeout | memory | runtime_error |
output_limit | killed | compile_error), exit_code, stdout, stderr, stdout_truncated, stderr_truncated,
wall_s, cpu_s, isolation, signal, detail. The verdict is printed whatever it is; the exit code is 0 for status
ok, 1 for any other verdict. Without bubblewrap the command refuses to run (exit code 2) unless
``--unsafe-no-isolation`` is given.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(help="Run untrusted programs in the bubblewrap sandbox and print a JSON verdict.", no_args_is_help=True)

_COMPILERS = {"g++", "gcc", "c++", "cc", "clang++", "clang"}


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             short_help="Run a program in the sandbox; print its JSON verdict (exit 1 unless ok).")
def run(
    program: List[str] = typer.Argument(..., help="The command after `--`, e.g. `python main.py` or `./main`."),
    time_limit: float = typer.Option(6.0, "--time-limit", help="CPU-time limit in seconds (wall kill at 2·TL + 1)."),
    memory_mb: int = typer.Option(1024, "--memory-mb", help="Address-space limit in MiB."),
    stdin: Optional[Path] = typer.Option(None, "--stdin", help="File fed to the program's standard input."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir", help="Copy files the program created here."),
    stack_unlimited: bool = typer.Option(False, "--stack-unlimited", help="`ulimit -s unlimited` (IOI runs)."),
    unsafe_no_isolation: bool = typer.Option(False, "--unsafe-no-isolation", help="Run without namespaces (trusted code only)."),
) -> None:
    """Run a program (the command after `--`) in the sandbox under CPU-time and memory limits; print its verdict as
    one JSON line (status ok | timeout | memory | runtime_error | output_limit | killed | compile_error, exit code,
    output, times). Exit code: 0 when the status is ok, 1 for any other verdict, 2 when the sandbox cannot run."""
    from recipe.sandbox import Limits, SandboxUnavailable, Session

    try:
        limits = Limits(time_limit_s=time_limit, memory_mb=memory_mb, stack_unlimited=stack_unlimited)
    except ValueError as e:
        raise typer.BadParameter(str(e))
    data = stdin.read_bytes() if stdin else None
    try:
        session = Session(limits, unsafe_no_isolation=unsafe_no_isolation)
    except SandboxUnavailable as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    with session:
        argv = []
        for i, arg in enumerate(program):
            p = Path(arg)
            if p.is_file():
                session.write(p.name, p.read_bytes(), 0o755 if (p.stat().st_mode & 0o111) else 0o644)
                arg = f"./{p.name}" if i == 0 else p.name
            elif i == 0 and arg == "python":
                arg = "python3"
            argv.append(arg)
        before = {q.name for q in session.path.iterdir()}
        verdict = session.run(argv, stdin=data)
        if Path(program[0]).name in _COMPILERS and verdict.status != "ok":
            verdict.status = "compile_error"
        if output_dir:
            output_dir.mkdir(parents=True, exist_ok=True)
            for q in session.path.iterdir():
                if q.name not in before and q.is_file() and not q.is_symlink():
                    shutil.copyfile(q, output_dir / q.name)
                    shutil.copymode(q, output_dir / q.name)
    json.dump(verdict.to_dict(), sys.stdout)
    sys.stdout.write("\n")
    if verdict.status != "ok":
        raise typer.Exit(1)


@app.command()
def check() -> None:
    """Say whether bubblewrap isolation works on this host (JSON)."""
    from recipe.sandbox import probe
    from recipe.sandbox.launcher import launcher_path

    info = dict(probe())
    info["cpu_accounting"] = "launcher" if launcher_path() else "unavailable (no C compiler)"
    typer.echo(json.dumps(info))
    raise typer.Exit(0 if info.get("available") else 2)
