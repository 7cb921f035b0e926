"""Every command README.md and docs/ show runs as written: each ``recipe ...`` line (code blocks and inline code) names
a command that exists, options that command takes and suites `recipe eval` knows, and its ``--help`` works; each
``python benchmarks/X.py ...`` names options its parser takes and every option it requires; each ``make X`` is a
target of the Makefile. A few commands are cheap enough to run as written."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from recipe.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND = typer.main.get_command(app)
_START = re.compile(r"^(?:\$ )?(?:\.venv/bin/)?(recipe|(?:\.venv/bin/)?python benchmarks/\S+\.py|make)(?=\s|$)")


def _doc_commands() -> list[tuple[str, str]]:
    """(page:line, command) for every command line in code blocks and inline code spans."""
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        in_block, pending = False, ""
        for no, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            where = f"{page.name}:{no}"
            if in_block:
                text = (pending + " " + line.strip()) if pending else line.strip()
                if text.endswith("\\"):  # a command continued on the next line
                    pending = text[:-1]
                    continue
                pending = ""
                if _START.match(text):
                    found.append((where, text))
                continue
            for span in re.findall(r"`([^`]+)`", line):
                if _START.match(span.strip()):
                    found.append((where, span.strip()))
    return found


def _tokens(command: str) -> list[str]:
    """The words of a documented command: comments, ``...`` and the brackets of optional parts dropped."""
    command = re.sub(r"\s+#\s.*$", "", command).replace("…", " ").replace("...", " ")
    command = re.sub(r"^(?:\$ )?\.venv/bin/", "", command)
    words = shlex.split(command.replace("[", " ").replace("]", " "), posix=True)
    return [w for w in words if w != "|"]


RECIPE = [(w, c) for w, c in _doc_commands() if _tokens(c)[0] == "recipe"]
SCRIPTS = [(w, c) for w, c in _doc_commands() if _tokens(c)[0] == "python"]
MAKES = [(w, c) for w, c in _doc_commands() if _tokens(c)[0] == "make"]


def _resolve(words: list[str]) -> list[tuple[list[str], object, list[str]]]:
    """Each command a documented line names (``render|submit`` names two), as (path, command, the words after it)."""
    out = []

    def walk(cmd, path, rest):
        if hasattr(cmd, "commands") and rest and rest[0].startswith("<"):  # `recipe <command> --help`: any
            return
        if hasattr(cmd, "commands") and rest and not rest[0].startswith("-"):  # a group (typer vendors click)
            names = rest[0].split("|")
            if all(n in cmd.commands for n in names):
                for n in names:
                    walk(cmd.commands[n], [*path, n], rest[1:])
                return
            if cmd.invoke_without_command is False or set(names) & set(cmd.commands) or len(names) > 1:
                raise AssertionError(f"`{' '.join(path)} {rest[0]}`: no such command (has: "
                                     f"{', '.join(cmd.commands)})")
        out.append((path, cmd, rest))
    walk(COMMAND, ["recipe"], words[1:])
    return out


def _option_names(cmd, path: list[str]) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))} | {"--help"}


def _known_suites() -> set[str]:
    r = CliRunner().invoke(app, ["eval", "suites"])
    assert r.exit_code == 0, r.output
    return {line.split()[0] for line in r.output.splitlines() if line.strip() and not line.startswith("scored ")}


def test_the_docs_show_commands():  # the extraction itself finds what README's Commands section lists
    assert len(RECIPE) > 40 and SCRIPTS and MAKES
    assert any(c.startswith("recipe compare-to-start --run-id ID") for _, c in RECIPE)


@pytest.mark.parametrize("where,command", RECIPE, ids=[w for w, _ in RECIPE])
def test_a_documented_recipe_command_exists_with_its_options(where, command):
    suites = None
    for path, cmd, rest in _resolve(_tokens(command)):
        r = CliRunner().invoke(app, [*path[1:], "--help"])
        assert r.exit_code == 0, f"{where}: `{' '.join(path)} --help` failed: {r.output}"
        known = _option_names(cmd, path)
        words = rest[: rest.index("--")] if "--" in rest else rest  # after --: the sandboxed program's own
        for i, w in enumerate(words):
            if re.fullmatch(r"--?[a-zA-Z][\w-]*(=.*)?", w):
                assert w.split("=")[0] in known, f"{where}: `{' '.join(path)}` has no option {w} ({command})"
            if w == "--suite" and i + 1 < len(words) and re.fullmatch(r"[a-z][\w|-]*", words[i + 1]):
                suites = suites or _known_suites()
                unknown = set(words[i + 1].split("|")) - suites
                assert not unknown, f"{where}: --suite {'|'.join(sorted(unknown))} is not a suite ({command})"


# Every documented script's --help, from one interpreter (the scripts share their imports: torch once, not per
# script); a script that fails to print its help is reported by name
_HELPS = r"""
import contextlib, io, json, runpy, sys
out = {}
for script in sys.argv[1:]:
    sys.argv, buf = [script, "--help"], io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(script, run_name="__main__")
        out[script] = {"error": "exited without printing its help"}
    except SystemExit as e:
        out[script] = {"help": buf.getvalue()} if not e.code else {"error": f"exit {e.code}: {buf.getvalue()[-500:]}"}
    except Exception as e:
        out[script] = {"error": f"{type(e).__name__}: {e}"}
print("@@helps " + json.dumps(out))
"""
SCRIPT_NAMES = sorted({_tokens(c)[1] for _, c in SCRIPTS})


@pytest.fixture(scope="module")
def script_helps() -> dict:
    import json
    r = subprocess.run([sys.executable, "-c", _HELPS, *SCRIPT_NAMES], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    line = [x for x in r.stdout.splitlines() if x.startswith("@@helps ")]
    assert line, r.stderr[-3000:]
    return json.loads(line[-1].removeprefix("@@helps "))


@pytest.mark.parametrize("script", SCRIPT_NAMES)
def test_a_documented_benchmark_script_takes_its_documented_options(script, script_helps):
    assert "help" in script_helps[script], f"{script} --help: {script_helps[script]['error']}"
    text = script_helps[script]["help"]
    usage = text.split("\n\n")[0]
    offered = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text))
    optional_removed = usage
    while re.search(r"\[[^\[\]]*\]", optional_removed):  # [--x X], nested [--a [A ...]]
        optional_removed = re.sub(r"\[[^\[\]]*\]", "", optional_removed)
    required = set(re.findall(r"(?<![\w-])(--[\w-]+)", optional_removed))
    for where, command in SCRIPTS:
        words = _tokens(command)
        if words[1] != script:
            continue
        given = {w.split("=")[0] for w in words if w.startswith("-")}
        assert given <= offered, f"{where}: {script} has no option {sorted(given - offered)} ({command})"
        assert required <= given, f"{where}: {script} requires {sorted(required - given)} ({command})"


def test_documented_make_targets_exist():
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    for where, command in MAKES:
        words = _tokens(command)
        for w in words[1:]:
            if "=" not in w and not w.startswith("-"):
                assert w in targets, f"{where}: make has no target {w} ({command})"


@pytest.mark.parametrize("args,code,says", [
    (["eval", "score", "--help"], 0, "--task"),
    (["config", "tiny", "-s", "sft.lrr=1"], 2, "sft.lrr: unknown key (allowed: lr, min_lr"),
    (["config", "--profile", "small", "-s", "@small-smoke"], 0, "profile: small"),
    (["eval", "suites"], 0, "tiny_long_context"),
])
def test_cheap_documented_commands_run_as_written(args, code, says):
    r = CliRunner().invoke(app, args)
    assert r.exit_code == code and says in " ".join(r.output.split()), r.output


def _commands(cmd, path):
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _commands(sub, [*path, name])


def test_options_read_naturally_in_help():
    """A flag that is off by default is one name (`--no-notebooks`, not also `--no-no-notebooks`), shown without a
    type; a --no-X pair is kept only for a setting whose default is "unset" (`--thinking/--no-thinking`)."""
    for path, cmd in _commands(COMMAND, ["recipe"]):
        for p in cmd.params:
            names = [*p.opts, *getattr(p, "secondary_opts", ())]
            assert not any(n.startswith("--no-no-") for n in names), (path, names)
            if getattr(p, "secondary_opts", None):
                assert p.default is None, f"`{' '.join(path)}` {names}: a flag off by default needs one name"
        r = CliRunner().invoke(app, [*path[1:], "--help"], terminal_width=200)
        assert r.exit_code == 0 and "<bool>" not in r.output, (path, r.output)


def test_eval_suites_lists_every_suite_the_commands_accept():
    from recipe.config import load_config
    from recipe.eval.olympiad.score_suites import SUITES as OLYMPIAD
    listed = _known_suites()
    assert {f"tiny_{d}" for d in load_config("tiny").domains.names} <= listed
    assert set(OLYMPIAD) <= listed and {"ifeval", "ifbench", "aime25"} <= listed
