"""Tiny SWE (paper §4.8 in miniature): a generated repository of a few small files, one function broken by an
injected bug, and an issue that reports the failure. Graded by the repository's hidden tests run in the sandbox
after the response's edit is applied to a copy (verifier ``swe_patch``; strict binary reward).

- ``swe`` records are *agentless* prompts (RECIPE.md §4.1 row 7a): the issue plus the relevant file (the golden
  localisation); the answer is a SEARCH/REPLACE block (or a unified diff) that undoes the bug.
- ``swe_agentic`` records (row 7b) hold the same repositories for the multi-turn tool loop of
  ``recipe.train.agentic_rollouts``: the prompt is the issue only (files are listed, read, edited and tested through tool
  calls, non-thinking mode). For SFT, an ``swe_agentic`` record is one step of the reference trajectory (the
  conversation so far -> the next tool call; ``verifier.step`` = its index); the agentic RL stage and validation
  start every episode at step 0 from ``verifier`` (files, tests, issue).
Every repository is deterministic for a seed: files, constants, which function breaks and how.
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example

# name -> (signature, correct body, buggy bodies, fixed test inputs, test input drawer); bodies use {k} (and {k1} =
# k + 1). A repository's hidden tests call each function on its three fixed inputs, or (``swe_drawn_inputs``) on three
# drawn per repository. With the fixed inputs and constants 2-9 the generator makes 57 distinct issues, and the
# functions without a constant give one issue per bug: held out once, that function/bug kind never trains (seed 0:
# 7 of its 12 agentic report issues). Drawn inputs and constants up to ``swe_max_constant`` 29 give hundreds of issues
# and every kind on both sides of the split (docs/EVIDENCE.md, "Agentic SWE").
def _ints(lo: int, hi: int):
    return lambda rng, k_max: str(rng.randint(lo, hi + k_max))


def _int_list(shortest: int):
    return lambda rng, k_max: str([rng.randint(0, 9) for _ in range(rng.randint(shortest, 4))])


def _word(rng, k_max) -> str:
    return repr("".join(rng.choice("abxyz") for _ in range(rng.randint(1, 3))))


FUNCS = {
    "scale": ("x", "x * {k}", ("x + {k}", "x * {k1}"), ("3", "5", "-2"), _ints(-9, 0)),
    "shift": ("x", "x + {k}", ("x - {k}", "x + {k1}"), ("0", "7", "-4"), _ints(-9, 0)),
    "cap": ("x", "min(x, {k})", ("max(x, {k})", "min(x, {k1})"), ("1", "20", "-3"), _ints(-9, 10)),
    "floor0": ("x", "max(x, 0)", ("min(x, 0)", "max(x, 1)"), ("4", "-5", "0"), _ints(-20, 0)),
    "is_even": ("x", "x % 2 == 0", ("x % 2 == 1", "x % 3 == 0"), ("2", "3", "6"), _ints(0, 0)),
    "head": ("xs", "xs[0]", ("xs[-1]", "xs[1]"), ("[4, 1, 2]", "[9, 8]", "[0, 5, 7]"), _int_list(2)),
    "total": ("xs", "sum(xs)", ("sum(xs) - 1", "len(xs)"), ("[1, 2, 3]", "[5]", "[2, 2]"), _int_list(1)),
    "twice": ("s", "s + s", ("s", "s + s + s"), ("'ab'", "'x'", "'hey'"), _word),
}
MODULES = ("mathops", "util", "core", "helpers")


def _func_src(name: str, body: str) -> str:
    return f"def {name}({FUNCS[name][0]}):\n    return {body}\n"


def generate_repo(rng: random.Random, spec: TinyDomainSpec) -> dict:
    """One repository: {"files", "tests", "path", "issue", "buggy", "fixed", "agent_edit", "function", "bug"}.
    buggy/fixed: the smallest unique edit, the broken ``return`` line and its fix (the whole function when that line
    is not unique); agent_edit: the agent's (old, new), unique as a substring; bug: the broken function."""
    names = rng.sample(sorted(FUNCS), spec.swe_functions)
    consts = {n: rng.randint(2, spec.swe_max_constant) for n in names}
    target = rng.choice(names)
    module = rng.choice(MODULES)
    k = consts[target]
    fmt = {"k": k, "k1": k + 1}
    good = FUNCS[target][1].format(**fmt)
    bad = rng.choice(FUNCS[target][2]).format(**fmt)
    src = {n: _func_src(n, FUNCS[n][1].format(k=consts[n], k1=consts[n] + 1)) for n in names}
    good_ns: dict = {}
    exec("".join(src.values()), good_ns)  # our own reference code, never model output
    src[target] = _func_src(target, bad)
    bad_ns: dict = {}
    exec("".join(src.values()), bad_ns)
    path = f"{module}.py"
    inputs = {n: _test_inputs(rng, spec, n, good_ns[n], bad_ns[n] if n == target else None) for n in names}
    tests, issue_arg = [f"from {module} import {', '.join(names)}", ""], None
    for n in names:
        for i, arg in enumerate(inputs[n]):
            want = good_ns[n](eval(arg))  # noqa: S307 - literal test inputs of this module
            tests += [f"def test_{n}_{i}():", f"    assert {n}({arg}) == {want!r}", ""]
            if n == target and issue_arg is None and bad_ns[n](eval(arg)) != want:  # noqa: S307
                issue_arg = (arg, want, bad_ns[n](eval(arg)))  # noqa: S307
    if issue_arg is None:  # the bug changes nothing on the listed inputs: cannot happen with FUNCS, guard anyway
        raise ValueError(f"bug in {target} is not visible to its tests")
    arg, want, got = issue_arg
    issue = f"{target}({arg}) returns {got!r} but should return {want!r}."
    files = {path: "".join(src[n] for n in names)}
    buggy, fixed = f"    return {bad}\n", f"    return {good}\n"
    if files[path].count(buggy) != 1:  # the broken line also occurs elsewhere: the edit names the whole function
        buggy, fixed = _func_src(target, bad), _func_src(target, good)
    # the agent's edit_file(old, new): the stripped lines, unless the stripped line also occurs inside another line
    # (``return s`` in ``return sum(xs)``, ``return x + 2`` in ``return x + 29``): the editor replaces only a unique
    # ``old``, so the edit then names the whole function
    agent_edit = (buggy.strip(), fixed.strip())
    if files[path].count(agent_edit[0]) != 1:
        agent_edit = (_func_src(target, bad).strip(), _func_src(target, good).strip())
    return {"files": files, "tests": {"test_repo.py": "\n".join(tests)}, "path": path, "issue": issue,
            "buggy": buggy, "fixed": fixed, "agent_edit": agent_edit, "function": target,
            "bug": _func_src(target, bad)}


def _test_inputs(rng: random.Random, spec: TinyDomainSpec, name: str, good, bad) -> list[str]:
    """The hidden tests' inputs of one function: its three fixed ones, or (``swe_drawn_inputs``) three distinct drawn
    ones, drawn again until the broken function ``bad`` (the target's) fails on one of them."""
    if not spec.swe_drawn_inputs:
        return list(FUNCS[name][3])
    draw = FUNCS[name][4]
    for _ in range(200):
        args: list[str] = []
        while len(args) < 3:
            a = draw(rng, spec.swe_max_constant)
            if a not in args:
                args.append(a)
        if bad is None or any(bad(eval(a)) != good(eval(a)) for a in args):  # noqa: S307 - our own literals
            return args
    raise ValueError(f"swe: no drawn inputs of {name} show its bug")


def search_replace(path: str, old: str, new: str) -> str:
    return f"{path}\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE"


def _verifier(repo: dict, spec: TinyDomainSpec, **extra) -> dict:
    return {"name": "swe_patch", "files": repo["files"], "tests": repo["tests"], "path": repo["path"],
            "issue": repo["issue"], "time_limit_s": spec.sandbox_time_limit_s, **extra}


def _repo_key(repo: dict) -> str:
    """A repository: the issue and the file (the agentless prompt shows both; they decide the edit). ``swe`` and
    ``swe_agentic`` draw from one generator, so a repository held out in one is kept out of the other's training."""
    return "swe-repo\x1e" + repo["issue"] + "\x1e" + repo["files"][repo["path"]]


def _agentic_key(repo: dict) -> str:
    """An agentic task: the issue (all an episode shows before its tool calls) and the buggy function (what decides
    the fix). The other functions of the file do not enter: two repositories that differ only there are one task.
    Issues that several bugs share (``is_even(2)``) stay in one split by the data phase's prompt rule."""
    return "swe-bug\x1e" + repo["issue"] + "\x1e" + repo["bug"]


def agentless_prompt(repo: dict) -> str:
    (path, text), = repo["files"].items()
    return (f"Issue: {repo['issue']}\nFile {path}:\n{text}"
            "Fix the bug with a SEARCH/REPLACE edit.")


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    repo = generate_repo(rng, spec)
    return Example(prompt=(("user", agentless_prompt(repo)),), verifier=_verifier(repo, spec),
                   split_key=_repo_key(repo), shared_key=_repo_key(repo),
                   reasoning=f"{repo['function']} is wrong", content=search_replace(repo["path"], repo["buggy"], repo["fixed"]))


# -- agentic ----------------------------------------------------------------------------------------------------

def _tool(name: str, desc: str, params: dict[str, str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": list(params)}}}


AGENT_TOOLS = (
    _tool("list_files", "list", {}),
    _tool("read_file", "read", {"path": "string"}),
    _tool("edit_file", "replace text", {"path": "string", "old": "string", "new": "string"}),
    _tool("run_tests", "test", {}),
    _tool("submit", "done", {}),
)


def agentic_prompt(issue: str) -> str:
    return f"Issue: {issue}\nFix the repository."


def format_test_report(passed: int, total: int) -> str:
    """The ``run_tests`` tool's response (the agentic environment, ``recipe.train.agentic_rollouts``, answers with it)."""
    return f"{passed}/{total} tests passed"


def reference_trajectory(repo: dict) -> list[tuple[str, dict, str]]:
    """[(tool name, arguments, tool response)] of a good episode: list the files, read the one listed, edit it,
    submit. The responses are those ``recipe.train.agentic_rollouts`` produces for these actions. Every argument comes from
    the issue or from an earlier tool response (the issue does not name the file: listing finds it), and the loop
    is as short as that allows (``run_tests`` stays a tool the policy may call; the reward runs the tests anyway)."""
    old, new = repo["agent_edit"]
    return [("list_files", {}, "\n".join(sorted(repo["files"]))),
            ("read_file", {"path": repo["path"]}, repo["files"][repo["path"]]),
            ("edit_file", {"path": repo["path"], "old": old, "new": new}, "edited"),
            ("submit", {}, "")]


def _call_text(name: str, args: dict) -> str:
    return f"<tool_call><function={name}>" + "".join(f"<parameter={k}>{v}</parameter>" for k, v in args.items()) \
        + "</function></tool_call>"


def generate_agentic(rng: random.Random, spec: TinyDomainSpec) -> Example:
    repo = generate_repo(rng, spec)
    traj = reference_trajectory(repo)
    step = rng.randrange(len(traj))
    prompt = [("user", agentic_prompt(repo["issue"]))]
    for name, args, resp in traj[:step]:
        prompt += [("assistant", _call_text(name, args)), ("tool", resp)]
    name, args, _ = traj[step]
    call = {"type": "function", "function": {"name": name, "arguments": args}}
    return Example(prompt=tuple(prompt), verifier=_verifier(repo, spec, step=step, mode="instruct"),
                   reasoning=f"next: {name}", content="", tool_calls=(call,), tools=AGENT_TOOLS,
                   split_key=_agentic_key(repo), shared_key=_repo_key(repo))
