"""Sandbox throughput: sandboxed vs bare executions per second of a trivial
Python program, side by side in one run, the isolation overhead ratio (target: sandboxed >= 1/1.3 of bare at 2
workers, i.e. overhead <= 1.3x), and math-verify checks per second.

    .venv/bin/python benchmarks/bench_sandbox.py [--n 40] [--workers 2]

Bare = ``subprocess.run([python3, main.py])`` in a temp dir; sandboxed = ``recipe.sandbox.run`` (bubblewrap,
own uid, launcher with rlimits and seccomp, output capture, sweep, work dir created and removed).

``--decompose`` adds where a sandboxed run's time goes: bare ``true``, the uid switch, namespaces alone
(``unshare``), a minimal ``bwrap --unshare-all``, our ``bwrap`` argv, with the launcher and Python, and the whole
``recipe.sandbox.run`` (docs/SPEED.md).

When run as root (every sandboxed run then gets its own uid), it also times sandboxed runs from a parent that
holds ``--parent-mib`` MiB (default 2048, about a tiny trainer's RSS), with the uid switched by ``setpriv`` (what
the runner uses) against ``Popen(user=...)``, which forks the parent's whole address space instead of ``vfork``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from recipe.sandbox import probe, run  # noqa: E402

PROGRAM = "print(sum(range(1000)))\n"


def bare_once() -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "main.py"
        p.write_text(PROGRAM)
        r = subprocess.run(["/usr/bin/python3", str(p)], capture_output=True, cwd=d, env={"PATH": "/usr/bin:/bin"})
        assert r.stdout == b"499500\n"


def sandbox_once() -> None:
    v = run(["python3", "main.py"], files={"main.py": PROGRAM})
    assert v.status == "ok" and v.stdout == "499500\n", v


def rate(fn, n: int, workers: int) -> float:
    fn()  # warm-up (probe, launcher build, page cache)
    t = time.perf_counter()
    if workers <= 1:
        for _ in range(n):
            fn()
    else:
        with ThreadPoolExecutor(workers) as ex:
            list(ex.map(lambda _: fn(), range(n)))
    return n / (time.perf_counter() - t)


def decomposition(n: int, workers: int) -> list[tuple[str, float, float]]:
    """(what, ms a run at 1 worker, ms a run at ``workers``) for the pieces of one sandboxed run."""
    import shutil

    from recipe.sandbox import Limits
    from recipe.sandbox.bwrap import build_argv, drop_uid_prefix

    lim = Limits()
    work = Path(tempfile.mkdtemp(prefix="bench-sbx-"))
    (work / "main.py").write_text(PROGRAM)
    uid = 300_000 + os.getpid() % 1000 if os.geteuid() == 0 else None
    drop = (drop_uid_prefix(uid) or []) if uid is not None else []
    if uid is not None:
        for p in (work, work / "main.py"):
            os.chown(p, uid, uid)
    usr = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
    r, w = os.pipe()
    ours = build_argv(work, ["/usr/bin/true"], lim, disable_userns=bool(probe().get("disable_userns")), report_fd=None)
    ours_py = build_argv(work, ["python3", "main.py"], lim, disable_userns=bool(probe().get("disable_userns")),
                         report_fd=w)
    cases = [("bare python3 main.py", ["/usr/bin/python3", str(work / "main.py")]), ("bare true", ["/usr/bin/true"])]
    if drop:
        cases.append(("uid switch (setpriv) + true", [*drop, "/usr/bin/true"]))
    if shutil.which("unshare"):
        cases += [("+ user namespace (unshare -U)", [*drop, "unshare", "-U", "/usr/bin/true"]),
                  ("+ user, net namespaces (unshare -Un)", [*drop, "unshare", "-Un", "/usr/bin/true"])]
    cases += [("minimal bwrap --unshare-all + true", [*drop, "bwrap", "--unshare-all", *usr, "--", "/usr/bin/true"]),
              ("our bwrap argv + true", [*drop, *ours]),
              ("our bwrap argv + launcher + python3 main.py", [*drop, *ours_py])]

    def runner(argv):
        return lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,),
                                      env={"PATH": "/usr/bin:/bin"}, start_new_session=True)

    rows = [(name, 1000 / rate(runner(argv), n, 1), 1000 / rate(runner(argv), n, workers)) for name, argv in cases]
    rows.append(("recipe.sandbox.run (+ work dir, output threads, sweep)", 1000 / rate(sandbox_once, n, 1),
                 1000 / rate(sandbox_once, n, workers)))
    os.close(r)
    os.close(w)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def math_rate(n: int) -> float:
    from recipe.rewards.math_verifier import check_math

    pairs = [("\\frac{1}{2}", "0.5"), ("x^2+2x+1", "(x+1)^2"), ("\\sqrt{8}", "2\\sqrt{2}"), ("3", "4"), ("\\pi/2", "\\frac{\\pi}{2}")]
    for g, p in pairs:  # warm-up: imports and parser caches
        check_math(g, p)
    t = time.perf_counter()
    for i in range(n):
        g, p = pairs[i % len(pairs)]
        check_math(g + " " * (i % 3), p)  # vary the text a little so no literal short-cut dominates
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40, help="executions per measurement")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--math-n", type=int, default=200)
    ap.add_argument("--decompose", action="store_true", help="also time the pieces of one sandboxed run")
    ap.add_argument("--parent-mib", type=int, default=2048, help="as root: resident MiB of the parent for the uid-switch rows")
    a = ap.parse_args()
    if not probe().get("available"):
        raise SystemExit(f"bubblewrap unavailable: {probe().get('why')}")
    table = Table(title=f"sandbox throughput ({os.cpu_count()} CPUs, trivial Python program)")
    for col in ("measure", "workers", "per second", "ms each"):
        table.add_column(col)
    results = {}
    for w in sorted({1, a.workers}):
        b, s = rate(bare_once, a.n, w), rate(sandbox_once, a.n, w)
        results[w] = (b, s)
        table.add_row("bare subprocess", str(w), f"{b:.1f}", f"{1000 / b:.1f}")
        table.add_row("sandboxed (bwrap)", str(w), f"{s:.1f}", f"{1000 / s:.1f}")
        table.add_row("isolation overhead", str(w), f"{b / s:.2f}x", "target <= 1.3x at 2 workers" if w == 2 else "")
    if os.geteuid() == 0 and a.parent_mib > 0:
        import recipe.sandbox.bwrap as bwrap

        ballast = bytearray(a.parent_mib << 20)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1  # touch every page: resident, as a trainer's weights and optimizer state are
        real = bwrap.setpriv_path
        for switch, lookup in (("setpriv", real), ("popen", lambda: None)):
            if lookup() is None and switch == "setpriv":
                table.add_row(f"sandboxed, parent {a.parent_mib} MiB, uid via setpriv", str(a.workers), "-", "setpriv missing")
                continue
            bwrap.setpriv_path = lookup  # each Session reads it when it is created
            try:
                r = rate(sandbox_once, a.n, a.workers)
            finally:
                bwrap.setpriv_path = real
            table.add_row(f"sandboxed, parent {a.parent_mib} MiB, uid via {switch}", str(a.workers), f"{r:.1f}", f"{1000 / r:.1f}")
        del ballast
    m = math_rate(a.math_n)
    table.add_row("math-verify checks", "1", f"{m:.1f}", f"{1000 / m:.2f}")
    Console().print(table)
    if a.decompose:
        parts = Table(title="where a sandboxed run's time goes (ms a run)")
        for col in ("what runs", "1 worker", f"{a.workers} workers"):
            parts.add_column(col)
        for name, one, many in decomposition(a.n, a.workers):
            parts.add_row(name, f"{one:.1f}", f"{many:.1f}")
        Console().print(parts)
    if 2 in results:
        b, s = results[2]
        print(f"sandbox target (>= 1/1.3 of bare at 2 workers): {'MET' if b / s <= 1.3 else 'NOT MET'} ({b / s:.2f}x)")


if __name__ == "__main__":
    main()
