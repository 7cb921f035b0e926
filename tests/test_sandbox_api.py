"""Sandbox API and CLI: verdict fields, statuses, refusal without isolation, C++ with tests and checker."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recipe.rewards import verify
from recipe.sandbox import Limits, SandboxUnavailable, Session, probe, run
from recipe.sandbox.cpp import run_suite

HAVE_BWRAP = bool(probe().get("available"))
needs_bwrap = pytest.mark.skipif(not HAVE_BWRAP, reason=f"no bubblewrap isolation: {probe().get('why')}")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
FIX = Path(__file__).parent / "fixtures" / "sandbox"
VERDICT_KEYS = {"status", "exit_code", "stdout", "stderr", "stdout_truncated", "stderr_truncated", "wall_s", "cpu_s", "isolation"}


def test_limits_validate():
    with pytest.raises(ValueError):
        Limits(time_limit_s=0)
    assert Limits(time_limit_s=2).wall_s == 5


def test_refuses_without_isolation_unless_told(monkeypatch):
    from recipe.sandbox import bwrap_runner as runner

    monkeypatch.setattr(runner, "probe", lambda: {"available": False, "why": "bubblewrap (bwrap) is not installed"})
    with pytest.raises(SandboxUnavailable, match="unsafe_no_isolation"):
        Session()
    v = run(["python3", "-c", "print(6*7)"], unsafe_no_isolation=True)
    assert v.status == "ok" and v.stdout == "42\n" and v.isolation["mode"] == "none"


def test_code_verifier_raises_instead_of_silent_zero_without_sandbox(monkeypatch):
    from recipe.sandbox import bwrap_runner as runner

    monkeypatch.setattr(runner, "probe", lambda: {"available": False, "why": "no bwrap"})
    rec = {"verifier": {"name": "code", "tests": [{"input": "", "output": "1"}]}}
    with pytest.raises(SandboxUnavailable):
        verify(rec, "```python\nprint(1)\n```")


@needs_bwrap
def test_verdict_fields_stdin_and_env():
    v = run(["python3", "main.py"], files={"main.py": "import os,sys\nprint(sys.stdin.read().upper())\nprint(sorted(os.environ))"}, stdin="hello")
    assert VERDICT_KEYS <= set(v.to_dict())
    assert v.status == "ok" and v.exit_code == 0 and v.stdout.startswith("HELLO")
    assert "HF_TOKEN" not in v.stdout and v.isolation["mode"] == "bubblewrap" and v.isolation["network"] is False
    assert v.wall_s > 0 and v.cpu_s >= 0


@needs_bwrap
def test_runtime_error_and_exit_code():
    v = run(["python3", "-c", "import sys; sys.exit(3)"])
    assert v.status == "runtime_error" and v.exit_code == 3
    v = run(["python3", "-c", "raise ValueError('boom')"])
    assert v.status == "runtime_error" and "boom" in v.stderr


@needs_bwrap
def test_cli_prints_one_json_verdict(tmp_path):
    (tmp_path / "sol.py").write_text("a, b = map(int, input().split())\nprint(a + b)\n")
    (tmp_path / "in.txt").write_text("3 4\n")
    entry = Path(sys.executable).parent / "recipe"  # the installed `recipe` command (lead's root CLI)
    head = [str(entry), "sandbox"] if entry.exists() else [sys.executable, "-m", "typer", "recipe.cli.sandbox_cmd", "run"]
    out = subprocess.run([*head, "run", "--time-limit", "2", "--memory-mb", "256", "--stdin", "in.txt", "--", "python", "sol.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stdout + out.stderr
    v = json.loads(lines[0])
    assert VERDICT_KEYS <= set(v) and v["status"] == "ok" and v["stdout"] == "7\n"


@needs_bwrap
@needs_gxx
def test_cli_compiles_and_runs_cpp(tmp_path):
    from typer.testing import CliRunner

    from recipe.cli.sandbox_cmd import app

    (tmp_path / "main.cpp").write_text("#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a*b<<'\\n';}\n")
    (tmp_path / "in.txt").write_text("6 7\n")
    r = CliRunner()
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = r.invoke(app, ["run", "--time-limit", "30", "--memory-mb", "2048", "--output-dir", "build", "--", "g++", "-O2", "main.cpp", "-o", "main"])
        assert json.loads(res.stdout)["status"] == "ok", res.stdout
        res = r.invoke(app, ["run", "--time-limit", "1", "--memory-mb", "256", "--stdin", "in.txt", "--", "./build/main"])
        assert json.loads(res.stdout)["stdout"] == "42\n"
        (tmp_path / "bad.cpp").write_text("int main( {")
        res = r.invoke(app, ["run", "--time-limit", "30", "--memory-mb", "2048", "--", "g++", "bad.cpp"])
        assert json.loads(res.stdout)["status"] == "compile_error"
    finally:
        os.chdir(cwd)


@needs_bwrap
@needs_gxx
def test_competitive_cpp_with_expected_output_and_checker():
    src = "int main(){ long long a, b; cin >> a >> b; cout << a + b << '\\n'; }"
    tests = [{"input": "1 2\n", "output": "3\n"}, {"input": "-5 5\n", "output": "0"}]
    r = run_suite(src, tests)
    assert r.all_passed and [t.status for t in r.tests] == ["ok", "ok"]
    wrong = run_suite("int main(){ cout << 0; }", tests)
    assert not wrong.all_passed and wrong.tests[0].status == "wrong_answer" and len(wrong.tests) == 1
    checker = (FIX / "sum_checker.cpp").read_text()
    r = run_suite(src, [{"input": "10 20\n", "output": "(any representation)"}], checker=checker)
    assert r.all_passed and r.tests[0].score == 1.0
    r = run_suite("int main(){ cout << 7; }", [{"input": "10 20\n", "output": "x"}], checker=checker)
    assert not r.all_passed and r.tests[0].score == 0.0
    r = run_suite("int main( {", tests)
    assert not r.compiled and "error" in r.compile_stderr


@needs_bwrap
def test_code_verifier_python_and_cpp():
    tests = [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]
    rec = lambda **kw: {"mode": "thinking", "verifier": {"name": "code", "tests": tests, **kw}}  # noqa: E731
    ok = verify(rec(), "<think>plan</think>```python\na, b = map(int, input().split())\nprint(a + b)\n```")
    assert ok.score == 1.0 and len(ok.details["tests"]) == 2
    bad = verify(rec(), "</think>```python\na, b = map(int, input().split())\nprint(a * b)\n```")
    assert bad.score == 0.0 and bad.reason == "wrong_answer"
    assert verify(rec(time_limit_s=1), "</think>```python\nwhile True: pass\n```").reason == "timeout"
    assert verify(rec(), "<think>```python\nprint(3)\n```").reason == "unterminated_think"
    assert verify(rec(), "</think>no code").reason == "no_answer"
    assert verify({"verifier": {"name": "code"}}, "```python\n```").reason == "missing_field:tests"
    if shutil.which("g++"):
        cpp = verify(rec(language="cpp"), "</think>```cpp\nint main(){int a,b;cin>>a>>b;cout<<a+b;}\n```")
        assert cpp.score == 1.0
        assert verify(rec(language="cpp"), "</think>```cpp\nint main({\n```").reason == "compile_error"


_IDENTITY = ["python3", "-c", "import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups(), "
             "[l.split()[1] for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapPrm'))])"]


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="a run gets its own uid only when the host process is root")
@pytest.mark.parametrize("switch", ["setpriv", "popen"])
def test_root_host_runs_each_session_as_its_own_uid_without_groups_or_capabilities(monkeypatch, switch):
    """Both ways of switching uid (setpriv before bwrap, or Popen's own setuid) give the program the session's
    uid and gid, no supplementary groups and no capabilities."""
    import recipe.sandbox.bwrap as bwrap

    if switch == "popen":
        monkeypatch.setattr(bwrap, "setpriv_path", lambda: None)
    elif bwrap.setpriv_path() is None:
        pytest.skip("util-linux setpriv not installed")
    with Session() as s:
        v = s.run(_IDENTITY)
        uid = s.uid
    assert v.status == "ok", v.stderr
    assert v.isolation["uid_switch"] == switch
    assert v.stdout.split("[")[0].split() == [str(uid)] * 4
    assert "[]" in v.stdout and v.stdout.count("0000000000000000") == 2, v.stdout
