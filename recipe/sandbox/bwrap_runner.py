"""Run one program under bubblewrap with limits, and return a ``Verdict``. The only place model output runs.

What is covered, per run (EVAL.md §8): fresh namespaces with no network; a private
work dir (0700, owned by the run's own uid, removed afterwards); read-only system view; no home, caches
or tokens; an environment with nothing but PATH/HOME/TMPDIR/LANG; rlimits (CPU = TL+1, address space,
processes, file size, open files, core 0); stdout/stderr caps (beyond them the run is killed:
``output_limit``); a work-dir quota; a wall-clock kill (≈ 2·TL + 1) of the whole run; and a final sweep
so no process of the run is alive after the verdict. When the host process is root, every session runs
under its own unused uid, so ``RLIMIT_NPROC`` counts only that run's processes and no run can signal or
ptrace another one or the host's processes.

What is not covered: exact peak memory / cgroup accounting (no cgroup delegation assumed); CPU time of
processes that escaped the wait chain (there are none once the pid namespace dies); side channels;
kernel exploits. Without bubblewrap the runner refuses to run unless ``unsafe_no_isolation=True``, in
which case only rlimits, a cleared environment and the private work dir apply (``isolation.mode="none"``).
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable

from recipe.sandbox.bwrap import (SAFE_PATH, SandboxUnavailable, build_argv, cpu_limit, drop_uid_prefix, launcher_prefix,
                                  prlimit_prefix, probe)
from recipe.sandbox.launcher import launcher_path
from recipe.sandbox.types import Limits, Verdict

_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "memory exhausted")
_FATAL_SIGNALS = {signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGTRAP}
_UID_BASE, _UID_SPAN = 200_000, 800_000


def _uid_processes(uid: int) -> list[int]:
    """Live (non-zombie) processes whose /proc entry belongs to ``uid`` (one stat per process)."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError, OSError):
            continue
        if state != b"Z":  # a zombie runs nothing; it waits for a (possibly non-reaping) init to collect it
            pids.append(int(entry.name))
    return pids


def _sweep(uid: int | None, rounds: int = 50) -> int:
    """SIGKILL every process of ``uid`` until none is left; returns how many are left (0 normally)."""
    if uid is None:
        return 0
    left: list[int] = []
    for i in range(rounds):
        left = _uid_processes(uid)
        if not left:
            return 0
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(min(0.01, 0.001 * 2 ** i))  # a process killed with its pid namespace is usually gone in ~1 ms
    return len(_uid_processes(uid))


def _dir_bytes(path: Path, stop_at: int) -> int:
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            total += e.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
                    if total > stop_at:
                        return total
        except OSError:
            continue
    return total


class Session:
    """A private work dir (and uid) shared by a few sandboxed runs, e.g. compile then run; removed on close.

    >>> with Session() as s:            # doctest: +SKIP
    ...     s.write("main.py", "print(1)")
    ...     s.run(["python3", "main.py"]).stdout
    '1\\n'
    """

    def __init__(self, limits: Limits | None = None, *, unsafe_no_isolation: bool = False, base_dir: str | None = None):
        self.limits = limits or Limits()
        info = probe()
        self.isolated = bool(info.get("available"))
        if not self.isolated and not unsafe_no_isolation:
            raise SandboxUnavailable(f"refusing to run untrusted code without isolation: {info.get('why')}. "
                                     "Install bubblewrap, or pass unsafe_no_isolation=True / --unsafe-no-isolation "
                                     "only for code you trust.")
        self.uid = (_UID_BASE + secrets.randbelow(_UID_SPAN)) if os.geteuid() == 0 else None
        # how a run switches to that uid: setpriv before bwrap (keeps Popen's vfork), else Popen(user=...)
        self._uid_prefix = drop_uid_prefix(self.uid) if self.uid is not None else None
        root = Path(base_dir or tempfile.gettempdir())
        self.path = Path(tempfile.mkdtemp(prefix="recipe-sbx-", dir=root))
        os.chmod(self.path, 0o700)
        if self.uid is not None:
            os.chown(self.path, self.uid, self.uid)
        self._info = info
        self._dirty = False  # True while a run may have left processes that no sweep has checked

    # -- files -----------------------------------------------------------------------------
    def write(self, name: str, data: bytes | str, mode: int = 0o644) -> Path:
        p = (self.path / name).resolve()
        if self.path.resolve() not in p.parents:
            raise ValueError(f"file name {name!r} escapes the work dir")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        os.chmod(p, mode)
        if self.uid is not None:
            os.chown(p, self.uid, self.uid)
        return p

    def read(self, name: str) -> bytes:
        p = (self.path / name).resolve()
        if self.path.resolve() not in p.parents or p.is_symlink():
            raise ValueError(f"file name {name!r} escapes the work dir")
        return p.read_bytes()

    def close(self) -> None:
        if self._dirty:
            _sweep(self.uid)
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- running ---------------------------------------------------------------------------
    def isolation(self) -> dict:
        if not self.isolated:
            return {"mode": "none", "warning": "unsafe_no_isolation: rlimits and a private work dir only"}
        return {"mode": "bubblewrap", "bwrap": self._info.get("version"), "namespaces": "user,pid,net,ipc,uts,cgroup,mount",
                "network": False, "own_uid": self.uid is not None,
                "uid_switch": None if self.uid is None else ("setpriv" if self._uid_prefix else "popen"),
                "userns_disabled_inside": bool(self._info.get("disable_userns")),
                "fs": "ro /usr,/lib*,/etc/{alternatives,ld.so.*}; tmpfs /tmp; rw /work only", "env": "cleared",
                "rlimits": {"cpu_s": cpu_limit(self.limits), "as_mb": self.limits.memory_mb,
                            "nproc": self.limits.max_processes, "fsize_mb": self.limits.max_file_mb,
                            "nofile": self.limits.max_open_files, "core": 0},
                "wall_kill_s": self.limits.wall_s}

    def run(self, program: list[str], stdin: bytes | str | None = None, limits: Limits | None = None) -> Verdict:
        lim = limits or self.limits
        rfd, wfd = os.pipe()
        launcher = launcher_path()
        if self.isolated:
            argv = build_argv(self.path, program, lim, disable_userns=bool(self._info.get("disable_userns")), report_fd=wfd)
            cwd = None
        else:
            argv = [*(launcher_prefix(launcher, wfd, lim) if launcher else prlimit_prefix(lim)), *program]
            cwd = str(self.path)
        kwargs = {}
        if self._uid_prefix is not None:
            argv = [*self._uid_prefix, *argv]
        elif self.uid is not None:
            kwargs = {"user": self.uid, "group": self.uid, "extra_groups": []}
        env = {"PATH": SAFE_PATH, "HOME": "/work" if self.isolated else str(self.path), "LANG": "C.UTF-8"}
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                    env=env, start_new_session=True, close_fds=True, pass_fds=(wfd,), **kwargs)
        except OSError as e:
            os.close(rfd)
            os.close(wfd)
            return Verdict("runtime_error", None, "", f"could not start: {e}", False, False, 0.0, 0.0, self.isolation(), detail="spawn_failed")
        os.close(wfd)
        self._dirty = True
        try:
            v = _supervise(proc, t0, lim, stdin, self, self.uid, rfd if launcher else None)
            self._dirty = v.isolation.get("leftover_processes", 1) != 0
            return v
        finally:
            os.close(rfd)


def _reader(stream, cap: int, out: dict, key: str, over: threading.Event) -> None:
    """Collect at most ``cap`` bytes; one byte more means the program exceeded its output limit."""
    buf = bytearray()
    truncated = False
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                break
            room = cap - len(buf)
            if len(chunk) > room:
                buf += chunk[:room]
                truncated = True
                over.set()
                break
            buf += chunk
    except (OSError, ValueError):
        pass
    finally:
        out[key] = (bytes(buf), truncated)
        try:
            stream.close()
        except OSError:
            pass


def _writer(stream, data: bytes) -> None:
    try:
        if data:
            stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _read_report(fd: int | None) -> tuple[float | None, int | None]:
    """(cpu seconds, raw wait status of the program) from the launcher, or (None, None)."""
    if fd is None:
        return None, None
    os.set_blocking(fd, False)
    try:
        raw = os.read(fd, 256).decode().split()
        return int(raw[0]) / 1e6, int(raw[1])
    except (BlockingIOError, OSError, ValueError, IndexError):
        return None, None


def _supervise(proc: subprocess.Popen, t0: float, lim: Limits, stdin, session: Session, uid: int | None, report_fd: int | None) -> Verdict:
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    outs: dict = {}
    overflow = threading.Event()
    done = threading.Event()
    waited: dict = {}
    threads = [
        threading.Thread(target=_reader, args=(proc.stdout, lim.stdout_limit_bytes, outs, "stdout", overflow), daemon=True),
        threading.Thread(target=_reader, args=(proc.stderr, lim.stderr_limit_bytes, outs, "stderr", overflow), daemon=True),
    ]
    if data:
        threads.append(threading.Thread(target=_writer, args=(proc.stdin, data), daemon=True))
    else:
        _writer(proc.stdin, data)  # nothing to write: close stdin now (no thread)

    def wait():
        _, status = os.waitpid(proc.pid, 0)
        waited.update(status=status, t=time.monotonic())
        done.set()

    threads.append(threading.Thread(target=wait, daemon=True))
    for t in threads:
        t.start()
    reason = None
    quota = lim.workdir_quota_mb << 20
    deadline = t0 + lim.wall_s
    while not done.wait(0.05 if not overflow.is_set() else 0):
        now = time.monotonic()
        if overflow.is_set():
            reason = "output"
        elif now >= deadline:
            reason = "wall"
        elif _dir_bytes(session.path, quota) > quota:
            reason = "quota"
        if reason:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            done.wait(5)
            break
    wall = (waited.get("t") or time.monotonic()) - t0
    left = _sweep(uid)
    for t in threads[:2]:
        t.join(2)
    if not done.is_set():  # the wait thread is stuck: should not happen once the pid namespace died
        done.wait(2)
    status = waited.get("status", 0)
    proc.returncode = os.waitstatus_to_exitcode(status) if "status" in waited else -9
    cpu, prog_status = _read_report(report_fd)
    if cpu is None:
        cpu = -1.0  # unknown: launcher unavailable or killed before reporting
    so, so_tr = outs.get("stdout", (b"", False))
    se, se_tr = outs.get("stderr", (b"", False))
    if overflow.is_set() and reason is None:
        reason = "output"
    code = proc.returncode
    sig = None
    if prog_status is not None:  # exact: the launcher saw the program's own wait status
        if os.WIFSIGNALED(prog_status):
            sig, code = os.WTERMSIG(prog_status), 128 + os.WTERMSIG(prog_status)
        elif os.WIFEXITED(prog_status):
            code = os.WEXITSTATUS(prog_status)
    elif code is not None and code < 0:
        sig = -code
    elif code is not None and 128 < code <= 128 + 64:
        sig = code - 128  # bwrap and the launcher report a child killed by signal N as 128 + N
    stderr_text = se.decode(errors="replace")
    status_s, detail = _classify(reason, cpu, lim, code, sig, stderr_text, have_launcher=report_fd is not None)
    iso = session.isolation()
    iso["leftover_processes"] = left
    return Verdict(status_s, code, so.decode(errors="replace"), stderr_text, so_tr, se_tr, round(wall, 4), round(cpu, 4), iso, sig, detail)


def _classify(reason, cpu, lim: Limits, code, sig, stderr: str, have_launcher: bool = True) -> tuple[str, str]:
    if reason == "output":
        return "output_limit", "stdout/stderr cap exceeded"
    if reason == "quota":
        return "output_limit", f"work dir exceeded {lim.workdir_quota_mb} MB"
    if reason == "wall":
        return "timeout", f"wall clock exceeded {lim.wall_s:.1f}s"
    if cpu > lim.time_limit_s or sig == signal.SIGXCPU or (sig == signal.SIGKILL and not have_launcher):
        return "timeout", f"cpu {cpu:.2f}s > {lim.time_limit_s}s"
    if sig == signal.SIGXFSZ or (code != 0 and "File too large" in stderr):  # CPython ignores SIGXFSZ: EFBIG
        return "output_limit", "file size limit exceeded"
    mem = any(m in stderr for m in _MEMORY_MARKERS)
    if sig is not None:
        if sig in _FATAL_SIGNALS:
            return ("memory" if mem else "runtime_error"), f"signal {signal.Signals(sig).name}"
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return "killed", f"signal {name}"
    if code != 0:
        return ("memory" if mem else "runtime_error"), f"exit code {code}"
    return "ok", ""


def run(program: list[str], *, files: dict[str, bytes | str] | None = None, stdin: bytes | str | None = None,
        limits: Limits | None = None, unsafe_no_isolation: bool = False, executable: Iterable[str] = ()) -> Verdict:
    """One program in a fresh sandbox: write ``files`` into the work dir, run, return the verdict."""
    with Session(limits, unsafe_no_isolation=unsafe_no_isolation) as s:
        for name, content in (files or {}).items():
            s.write(name, content, 0o755 if name in set(executable) else 0o644)
        return s.run(program, stdin=stdin)
