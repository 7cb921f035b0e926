"""exact_match, unit_tests (code) and swe_patch on correct, partial, malformed and hostile answers. Hostile
programs get a verdict within their limits and leave no process and no file behind."""
import os
import tempfile
import time

import pytest

from recipe.rewards.core import verify
from recipe.rewards.edits import EditError, apply_edit
from recipe.rewards.exact_match import normalize_answer


TESTS = {"test_hidden.py": "from solution import f\n\ndef test_0():\n    assert f(1) == 4\n\n"
                           "def test_1():\n    assert f(10) == 13\n\ndef test_2():\n    assert f(-3) == 0\n"}
CODE = {"name": "unit_tests", "tests": TESTS, "time_limit_s": 1.0}


def _code(body: str) -> str:
    return f"<think>x</think>```python\n{body}\n```"


def test_exact_match_normalises():
    rec = {"verifier": {"name": "exact_match", "expected_answer": "jade"}, "mode": "thinking"}
    assert verify(rec, "<think>a</think>\\boxed{ The Jade. }").score == 1.0
    assert verify(rec, "<think>a</think>\\boxed{ruby}").score == 0.0
    assert verify(rec, "<think>never closed \\boxed{jade}").reason == "unterminated_think"
    assert normalize_answer("An  Old, road!") == "old road"


def test_code_correct_partial_and_missing():
    rec = {"verifier": CODE, "mode": "thinking"}
    ok = verify(rec, _code("def f(x):\n    return x + 3"))
    assert ok.score == 1.0 and ok.details["passed"] == 3
    partial = verify(rec, _code("def f(x):\n    return x + 3 if x > 0 else 1"))
    assert partial.score == 0.0 and partial.reason == "tests_failed" and partial.details["passed"] == 2
    assert verify(rec, "<think>x</think>no code").reason == "no_answer"


@pytest.fixture
def private_tmp(monkeypatch):
    """Sandbox work dirs go to a private folder (other processes on the host use /tmp too)."""
    d = tempfile.mkdtemp(prefix="i10-sbx-root-")
    os.chmod(d, 0o711)  # the per-run uid must reach its own work dir inside
    # the compiled launcher's cache stays where it always is (it is not a work dir; when this test was the first
    # of its worker to need the launcher, the cache was created in the private folder and counted as left over)
    monkeypatch.setenv("RECIPE_SANDBOX_CACHE", os.environ.get("RECIPE_SANDBOX_CACHE") or
                       os.path.join(tempfile.gettempdir(), f"recipe-sandbox-{os.geteuid()}"))
    monkeypatch.setattr(tempfile, "tempdir", d)
    yield d
    monkeypatch.undo()
    left = os.listdir(d)
    os.rmdir(d) if not left else None
    assert not left, f"sandbox work dirs left behind: {left}"


@pytest.mark.parametrize("body,reasons", [
    ("import time\ndef f(x):\n    while True: pass", {"timeout"}),                       # never returns (import)
    ("def f(x):\n    while True: pass", {"timeout"}),                                       # never returns (call)
    ("import os\nfor _ in range(200):\n    try: os.fork()\n    except OSError: pass\ndef f(x):\n    return x + 3",
     {"correct", "no_result", "runtime_error", "timeout", "killed"}),                      # fork bomb: contained
    ("import sys\nsys.stdout.write('y' * 10_000_000)\ndef f(x):\n    return x + 3", {"output_limit"}),  # flood
    ("print('@@RESULT 0 3 3')\nimport os\nos._exit(0)", {"no_result"}),                      # forged result
])
def test_code_hostile_answers_get_a_verdict_within_limits(body, reasons, private_tmp):
    t0 = time.monotonic()  # baseline under the current load: a correct answer (start-up, tests, clean-up)
    assert verify({"verifier": CODE, "mode": "thinking"}, _code("def f(x):\n    return x + 3")).reason == "correct"
    baseline_s = time.monotonic() - t0
    t0 = time.monotonic()
    res = verify({"verifier": CODE, "mode": "thinking"}, _code(body))
    # wall limit 2*TL+1 plus twice the measured start-up and clean-up (quiet machine: ~0.5 s)
    assert time.monotonic() - t0 < 2 * 1.0 + 1 + 2 * baseline_s + 1
    assert res.reason in reasons, res
    if "fork" not in body:
        assert res.score == 0.0


def test_code_writes_outside_its_copy_leave_nothing_behind(tmp_path, private_tmp):
    target = tmp_path / "escaped.txt"
    body = (f"import os\nfor p in [{str(target)!r}, '/tmp/escaped_i10', '../escaped_i10', os.path.expanduser('~/x')]:\n"
            "    try: open(p, 'w').write('x')\n    except OSError: pass\ndef f(x):\n    return x + 3")
    res = verify({"verifier": CODE, "mode": "thinking"}, _code(body))
    assert res.score == 1.0  # the writes failed or stayed inside the sandbox; the function itself is right
    assert not target.exists() and not os.path.exists("/tmp/escaped_i10")
    assert not os.path.exists(os.path.join(private_tmp, "escaped_i10"))


REPO = {"m.py": "def a(x):\n    return x - 1\n\ndef b(x):\n    return x * 2\n"}
SWE = {"name": "swe_patch", "files": REPO, "path": "m.py", "time_limit_s": 1.0,
       "tests": {"test_repo.py": "from m import a, b\n\ndef test_a():\n    assert a(1) == 2\n\ndef test_b():\n"
                                  "    assert b(3) == 6\n"}}


def test_swe_search_replace_and_unified_diff_fix():
    rec = {"verifier": SWE, "mode": "thinking"}
    sr = "<think>x</think>m.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    return x + 1\n>>>>>>> REPLACE"
    assert verify(rec, sr).score == 1.0
    diff = "<think>x</think>--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def a(x):\n-    return x - 1\n+    return x + 1\n"
    res = verify(rec, diff)
    assert res.score == 1.0 and res.details["edit_format"] == "unified_diff"


@pytest.mark.parametrize("answer,reason", [
    ("no edit at all", "no_edit"),
    ("m.py\n<<<<<<< SEARCH\n    return x - 7\n=======\n    return x\n>>>>>>> REPLACE", "search_not_found"),
    ("../m.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    return x\n>>>>>>> REPLACE", "path_outside_repo"),
    ("/etc/passwd\n<<<<<<< SEARCH\nroot\n=======\nx\n>>>>>>> REPLACE", "path_outside_repo"),
    ("other.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE", "unknown_file"),
    ("m.py\n<<<<<<< SEARCH\n(x):\n=======\n(y):\n>>>>>>> REPLACE", "search_ambiguous"),
])
def test_swe_malformed_edit_is_zero_with_reason(answer, reason):
    res = verify({"verifier": SWE, "mode": "thinking"}, "<think>x</think>" + answer)
    assert res.score == 0.0 and res.reason == reason, res


def test_swe_partial_fix_and_hostile_edit():
    rec = {"verifier": SWE, "mode": "thinking"}
    wrong = "<think>x</think>m.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    return x + 2\n>>>>>>> REPLACE"
    res = verify(rec, wrong)
    assert res.reason == "tests_failed" and res.details["passed"] == 1 and res.details["total"] == 2
    hang = "<think>x</think>m.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    while True: pass\n>>>>>>> REPLACE"
    assert verify(rec, hang).reason == "timeout"


def test_edits_apply_in_memory_only():
    files = dict(REPO)
    out, fmt = apply_edit("<<<<<<< SEARCH\n    return x * 2\n=======\n    return x * 3\n>>>>>>> REPLACE", files, "m.py")
    assert fmt == "search_replace" and "x * 3" in out["m.py"] and files == REPO
    with pytest.raises(EditError):
        apply_edit("<<<<<<< SEARCH\n\n=======\nx\n>>>>>>> REPLACE", files, "m.py")
