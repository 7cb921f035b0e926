"""Build the bubblewrap command line for one run, and say whether isolation is available on this host.

Layout inside the sandbox: read-only ``/usr`` (and the ``/bin``, ``/lib*``, ``/sbin`` links or binds),
read-only ``/etc/alternatives`` and ``/etc/ld.so.cache`` only (no passwd, no hosts, no resolv.conf);
fresh ``/proc`` (own pid namespace) and minimal ``/dev``; a size-capped private tmpfs ``/tmp``; the
run's own work dir at ``/work`` (cwd, HOME). No home, no caches, no tokens, no project tree: nothing else
of the host file system is visible. All namespaces are unshared (no network: only a down loopback),
``--die-with-parent``, ``--new-session`` (no TIOCSTI), ``--disable-userns`` where supported, and a
cleared environment. Limits are applied inside by the launcher (``launcher.py``; ``prlimit`` without a C
compiler) just before the program is executed.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from recipe.sandbox.launcher import launcher_path
from recipe.sandbox.types import Limits

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxUnavailable(RuntimeError):
    """No isolation on this host; the message says how to get it (or to pass --unsafe-no-isolation)."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin:" + os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=1)
def probe() -> dict:
    """Run a trivial sandbox once; report whether bubblewrap works and which options it accepts."""
    exe = bwrap_path()
    if not exe:
        return {"available": False, "why": "bubblewrap (bwrap) is not installed: run `make system-deps` or `apt-get install -y bubblewrap`"}
    base = [exe, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr", *_root_links(), "--proc", "/proc", "--dev", "/dev"]
    r = subprocess.run([*base, "--", "/usr/bin/true"], capture_output=True, timeout=20, env={"PATH": SAFE_PATH})
    if r.returncode != 0:
        return {"available": False, "why": "bubblewrap cannot create namespaces here (unprivileged user namespaces disabled?): "
                + r.stderr.decode(errors="replace").strip()[:300]}
    disable_userns = subprocess.run([*base, "--unshare-user", "--disable-userns", "--", "/usr/bin/true"], capture_output=True, timeout=20,
                                    env={"PATH": SAFE_PATH}).returncode == 0
    ver = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    return {"available": True, "bwrap": exe, "version": ver, "disable_userns": disable_userns, "own_uid": os.geteuid() == 0}


def _root_links() -> list[str]:
    """/bin, /lib, /lib64, /sbin: symlinks into /usr on merged-/usr systems, read-only binds otherwise."""
    out: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            out += ["--symlink", os.readlink(p), f"/{name}"]
        elif p.is_dir():
            out += ["--ro-bind", str(p), f"/{name}"]
    return out


def build_argv(workdir: Path, program: list[str], limits: Limits, *, disable_userns: bool, report_fd: int | None = None) -> list[str]:
    exe = probe().get("bwrap") or "bwrap"
    argv = [exe, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if disable_userns:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--ro-bind", "/usr", "/usr", *_root_links()]
    for etc in ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        if os.path.exists(etc):
            argv += ["--ro-bind", etc, etc]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    argv += ["--bind", str(workdir), "/work", "--chdir", "/work"]
    launcher = launcher_path() if report_fd is not None else None
    if launcher:
        argv += ["--ro-bind", launcher, "/.recipe-launcher"]
    argv += ["--remount-ro", "/"]  # the root tmpfs would otherwise be an uncapped, writable RAM sink
    argv += ["--clearenv", "--setenv", "PATH", SAFE_PATH, "--setenv", "HOME", "/work", "--setenv", "TMPDIR", "/tmp",
             "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONHASHSEED", "0"]
    if launcher:
        argv += ["--", *launcher_prefix("/.recipe-launcher", report_fd, limits), *program]
    else:
        argv += ["--", *prlimit_prefix(limits), *program]
    return argv


def launcher_prefix(exe: str, report_fd: int, limits: Limits) -> list[str]:
    return [exe, str(report_fd), str(cpu_limit(limits)), str(limits.memory_mb << 20), str(limits.max_processes),
            str(limits.max_file_mb << 20), str(limits.max_open_files), "1" if limits.stack_unlimited else "0", "--"]


def cpu_limit(limits: Limits) -> int:
    """RLIMIT_CPU soft limit = ceil(TL) + 1 (EVAL.md §8); the hard limit is one second more."""
    return int(-(-limits.time_limit_s // 1)) + 1


@functools.lru_cache(maxsize=1)
def setpriv_path() -> str | None:
    """util-linux ``setpriv`` if it is root-owned and writable by root only (it runs as root), else None."""
    path = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if path is None:
        return None
    st = os.stat(path)
    return path if st.st_uid == 0 and not st.st_mode & 0o022 else None


def drop_uid_prefix(uid: int) -> list[str] | None:
    """argv prefix that switches a root parent's child to ``uid`` (real, effective and saved uid and gid; no
    supplementary groups) before it execs the rest, or None when ``setpriv`` is missing.

    Why not ``Popen(user=, group=, extra_groups=)``: CPython then cannot use ``vfork`` and copies the parent's
    page tables with a full ``fork``. Under a trainer holding 2 GB that costs ~100 ms a sandboxed run instead of
    ~1-3 ms (benchmarks/bench_sandbox.py), and code RL starts hundreds of runs a stage."""
    exe = setpriv_path()
    return None if exe is None else [exe, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def prlimit_prefix(limits: Limits) -> list[str]:
    cpu = cpu_limit(limits)
    mem = limits.memory_mb << 20
    args = ["/usr/bin/prlimit", f"--cpu={cpu}", f"--as={mem}", f"--nproc={limits.max_processes}",
            f"--fsize={limits.max_file_mb << 20}", f"--nofile={limits.max_open_files}", "--core=0"]
    if limits.stack_unlimited:
        args.append("--stack=unlimited")
    return [*args, "--"]
