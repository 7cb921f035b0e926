"""Our own time limit around pure-Python checks (math-verify/sympy), usable in threads and processes.

Math-Verify's built-in timeouts use ``signal.alarm``, which breaks outside the main thread (EVAL.md §3), so
verifiers call it with its timeouts disabled and wrap the call here instead:
- in the main thread of a process (the in-process trainer path and pool workers): ``setitimer`` +
  ``SIGALRM`` raising ``CheckTimeout``, restoring any previous handler and timer;
- in any other thread: the check runs in a daemon helper thread and is abandoned after the limit (Python
  cannot kill a thread; the abandoned computation finishes in the background). Not covered: a C
  extension that never returns to the interpreter.
"""
from __future__ import annotations

import signal
import threading
from typing import Any, Callable


class CheckTimeout(BaseException):  # BaseException: sympy/math-verify swallow Exception
    pass


def run_with_timeout(fn: Callable[[], Any], seconds: float) -> Any:
    if seconds is None or seconds <= 0:
        return fn()
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _alarm(fn, seconds)
    return _thread(fn, seconds)


def _alarm(fn: Callable[[], Any], seconds: float) -> Any:
    def handler(signum, frame):
        raise CheckTimeout(f"check exceeded {seconds}s")

    old_handler = signal.signal(signal.SIGALRM, handler)
    old_delay, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, old_delay)


def _thread(fn: Callable[[], Any], seconds: float) -> Any:
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True, name="recipe-check")
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise CheckTimeout(f"check exceeded {seconds}s (abandoned in a helper thread)")
    if "error" in box:
        raise box["error"]
    return box.get("value")
