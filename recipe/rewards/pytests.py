"""Hidden Python unit tests run in the sandbox, one sandbox run per response (code and SWE verifiers).

``run_unit_tests(files, tests, limits)`` writes ``files`` (the candidate's code, or a repository copy with the
edit applied) into a fresh sandbox work dir together with a harness and the hidden tests, runs ``python3`` there
once, and returns a ``TestReport``: how many tests passed, the sandbox verdict and a short detail.

- Tests are Python source: functions named ``test_*`` (``tests`` maps a file name to its source; the harness
  imports each file and calls every ``test_*`` function, in name order, each counted once).
- The harness imports nothing beyond ``os``, ``sys`` and ``types`` (``importlib.util`` + ``traceback`` cost ~9 ms of a
  ~40 ms sandbox run in interpreter start-up); a test file is compiled and run as a fresh module.
- The harness reads a one-time nonce from a file and deletes it before importing any candidate code; the result
  line must carry the nonce, so a candidate that prints a forged result and exits does not pass. (A candidate that
  searches the harness's own memory for the nonce could still forge it, as with any in-process test harness; the
  sandbox contains what it can do, not whether it cheats.)
- A candidate that never returns, forks, floods stdout or writes outside its work dir gets the sandbox's verdict
  (``timeout``, ``output_limit``, ...) within ``limits`` and scores 0; the work dir and every process are gone when
  the function returns (``recipe.sandbox.Session``).
- ``cached_report``: identical (files, tests) pairs give the same verdict for deterministic programs, so a batch of
  G samples that repeat one program runs it once (an in-process LRU; timeouts are never cached).
"""
from __future__ import annotations

import hashlib
import json
import secrets
from collections import OrderedDict
from dataclasses import asdict, dataclass

from recipe.sandbox import Limits, Session

HARNESS = r'''
import os, sys, types
_n = open("nonce.txt").read().strip(); os.remove("nonce.txt")
sys.path.insert(0, os.getcwd())
_files = sys.argv[1:]
_passed, _total, _fail = 0, 0, []
for _f in _files:
    try:
        _mod = types.ModuleType(_f[:-3].replace("/", "_")); _mod.__file__ = _f; sys.modules[_mod.__name__] = _mod
        with open(_f) as _src:
            exec(compile(_src.read(), _f, "exec"), _mod.__dict__)
    except BaseException as _e:
        _fail.append(f"{_f}: import failed: {type(_e).__name__}: {_e}"[:200]); _total += 1; continue
    for _name in sorted(k for k in vars(_mod) if k.startswith("test_") and callable(getattr(_mod, k))):
        _total += 1
        try:
            getattr(_mod, _name)(); _passed += 1
        except BaseException as _e:
            _fail.append(f"{_name}: {type(_e).__name__}: {_e}"[:200])
sys.stdout.flush()
os.write(1, ("\n@@RESULT " + _n + " %d %d\n" % (_passed, _total)).encode())
os.write(2, "\n".join(_fail[:5]).encode())
'''


@dataclass
class TestReport:
    passed: int
    total: int
    status: str          # sandbox verdict status ("ok", "timeout", "output_limit", ...) or "no_result"
    detail: str = ""
    wall_s: float = 0.0

    @property
    def all_passed(self) -> bool:
        return self.status == "ok" and self.total > 0 and self.passed == self.total

    def to_dict(self) -> dict:
        return asdict(self)


def run_unit_tests(files: dict[str, str], tests: dict[str, str], limits: Limits,
                   unsafe_no_isolation: bool = False) -> TestReport:
    with Session(limits, unsafe_no_isolation=unsafe_no_isolation) as s:
        for name, text in files.items():
            s.write(name, text)
        return run_tests_in_session(s, tests, limits)


def run_tests_in_session(s: Session, tests: dict[str, str], limits: Limits) -> TestReport:
    """Write the hidden tests and the harness into an open session, run them on what the work dir holds now,
    and remove them again (an agent working in the same session never sees them)."""
    nonce = secrets.token_hex(16)
    for name, text in tests.items():
        s.write(name, text)
    s.write("_harness.py", HARNESS)
    s.write("nonce.txt", nonce)
    try:
        v = s.run(["python3", "_harness.py", *sorted(tests)], limits=limits)
    finally:
        for name in [*tests, "_harness.py", "nonce.txt"]:
            (s.path / name).unlink(missing_ok=True)
    marker = f"@@RESULT {nonce} "
    line = next((ln for ln in reversed(v.stdout.splitlines()) if ln.startswith(marker)), None)
    if v.status != "ok":
        return TestReport(0, len(tests), v.status, (v.detail or v.stderr[-200:]).strip(), v.wall_s)
    if line is None:
        return TestReport(0, len(tests), "no_result", "the harness printed no result (exit or forged output)", v.wall_s)
    passed, total = (int(x) for x in line[len(marker):].split())
    return TestReport(passed, total, "ok", v.stderr[-300:].strip(), v.wall_s)


_CACHE: "OrderedDict[str, TestReport]" = OrderedDict()
_CACHE_SIZE = 4096


def cached_report(files: dict[str, str], tests: dict[str, str], limits: Limits) -> tuple[TestReport, bool]:
    """(report, from_cache). Timeouts and missing results are never cached (they may depend on machine load)."""
    key = hashlib.sha256(json.dumps([files, tests, asdict(limits)], sort_keys=True).encode()).hexdigest()
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit, True
    rep = run_unit_tests(files, tests, limits)
    if rep.status in ("ok",):
        _CACHE[key] = rep
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return rep, False
