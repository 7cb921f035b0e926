"""Hostile-program suite: each program must end with the right verdict inside its limit,
leave no file outside its work dir and no process behind, and leave the host responsive.

Needs bubblewrap (``make system-deps``); skipped with that reason where it is missing. C++ cases also
need g++.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from recipe.sandbox import Limits, Session, probe
from recipe.sandbox.cpp import compile_cpp
from recipe.sandbox.bwrap_runner import _uid_processes

pytestmark = pytest.mark.skipif(not probe().get("available"), reason=f"no bubblewrap isolation: {probe().get('why')}")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

FAST = Limits(time_limit_s=1, memory_mb=256, max_processes=32, workdir_quota_mb=32, max_file_mb=16, stdout_limit_bytes=64 << 10)
CANARY = "canary-" + uuid.uuid4().hex


def _time_true() -> float:
    t = time.monotonic()
    subprocess.run(["true"], check=True)
    return time.monotonic() - t


def host_responsive(baseline_s: float) -> bool:
    """Spawning `true` is about as fast as before the hostile run (20x + 1 s of slack for a loaded machine)."""
    return _time_true() < 20 * baseline_s + 1.0


def session_overhead_s(limits: Limits) -> float:
    """Wall time of a trivial program in a fresh session (start-up, run, clean-up), measured now, under the
    current load; the wall-clock limits below add it instead of a fixed allowance."""
    t = time.monotonic()
    with Session(limits) as s:
        s.write("main.py", "print(1)\n")
        assert s.run(["python3", "main.py"]).status == "ok"
    return time.monotonic() - t


def run_hostile(source: str, *, lang: str = "python", limits: Limits = FAST, stdin: str = ""):
    """Run ``source``; return (verdict, session uid, work dir path) after the session was closed."""
    spawn_s, overhead_s = _time_true(), session_overhead_s(limits)
    with Session(limits) as s:
        if lang == "python":
            s.write("main.py", source)
            program = ["python3", "main.py"]
        else:
            cv = compile_cpp(s, source)
            assert cv.status == "ok", cv.stderr[-500:]
            program = ["./main"]
        t = time.monotonic()
        v = s.run(program, stdin=stdin)
        elapsed = time.monotonic() - t
        uid, path = s.uid, s.path
    # measured on a quiet machine: a trivial session ~0.2 s, so this allows wall_s + ~1.4 s there
    assert elapsed <= limits.wall_s + 2 * overhead_s + 1, \
        f"verdict took {elapsed:.1f}s, limit {limits.wall_s}s, trivial session {overhead_s:.2f}s"
    assert v.isolation["leftover_processes"] == 0
    if uid is not None:
        assert _uid_processes(uid) == [], "a process of the run outlived its verdict"
    assert not path.exists(), "work dir not removed"
    assert host_responsive(spawn_s)
    v.overhead_s = overhead_s  # for the tests' own wall-clock checks
    return v


# --- resource exhaustion --------------------------------------------------------------------
def test_fork_bomb():
    v = run_hostile("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n")
    assert v.status in ("timeout", "runtime_error"), v


def test_memory_balloon():
    v = run_hostile("x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n")
    assert v.status == "memory", v


def test_infinite_loop():
    v = run_hostile("while True:\n    pass\n")
    assert v.status == "timeout", v


def test_busy_threads_count_cpu_of_all_threads():
    v = run_hostile("import threading\ndef spin():\n    while True: pass\nfor _ in range(4): threading.Thread(target=spin).start()\n")
    assert v.status == "timeout", v


def test_sleep_past_the_limit_is_killed_by_the_wall_clock():
    v = run_hostile("import time\ntime.sleep(60)\n")
    assert v.status == "timeout" and "wall" in v.detail and v.wall_s < FAST.wall_s + 1 + v.overhead_s, v


def test_stdout_flood():
    v = run_hostile("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    assert v.status == "output_limit" and v.stdout_truncated and len(v.stdout) == FAST.stdout_limit_bytes, v


def test_stderr_flood():
    v = run_hostile("import sys\nwhile True:\n    sys.stderr.write('e' * 65536)\n")
    assert v.status == "output_limit" and v.stderr_truncated, v


def test_one_huge_file_hits_the_file_size_limit():
    v = run_hostile("with open('big', 'wb') as f:\n    while True:\n        f.write(b'0' * (1 << 20))\n")
    assert v.status == "output_limit", v


def test_filling_the_disk_with_many_files_hits_the_quota():
    v = run_hostile("i = 0\nwhile True:\n    open(f'f{i}', 'wb').write(b'0' * (8 << 20)); i += 1\n",
                    limits=Limits(time_limit_s=3, memory_mb=256, workdir_quota_mb=32, max_file_mb=16))
    assert v.status == "output_limit", v


# --- file system and secrets ----------------------------------------------------------------
def test_writing_outside_the_work_dir(tmp_path):
    target = tmp_path / "escaped.txt"
    src = f"""
import os
hits = []
for p in [{str(target)!r}, '/usr/escaped.txt', '/etc/escaped.txt', '/escaped.txt', '/root/escaped.txt', {str(Path.home() / 'escaped.txt')!r}]:
    try:
        open(p, 'w').write('x'); hits.append(p)
    except OSError:
        pass
open('/tmp/escaped.txt', 'w').write('x')  # private tmpfs: allowed, invisible to the host
print('HITS', [h for h in hits if h != '/tmp/escaped.txt'])
"""
    v = run_hostile(src)
    assert v.status == "ok" and "HITS []" in v.stdout, v
    assert not target.exists() and not Path("/usr/escaped.txt").exists() and not (Path.home() / "escaped.txt").exists()


def test_reading_tokens_caches_and_environments(tmp_path, monkeypatch):
    token = tmp_path / ".cache" / "huggingface" / "token"
    token.parent.mkdir(parents=True)
    token.write_text(CANARY)
    monkeypatch.setenv("HF_TOKEN", CANARY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CANARY)
    src = f"""
import os, glob
seen = []
for p in [{str(token)!r}, os.path.expanduser('~/.cache/huggingface/token'), '/root/.cache/huggingface/token',
          '/proc/1/environ', '/proc/self/environ', f'/proc/{{os.getppid()}}/environ', '/proc/1/cmdline']:
    try:
        seen.append(open(p, 'rb').read().decode(errors='replace'))
    except OSError as e:
        seen.append(type(e).__name__)
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try: seen.append(open(f'/proc/{{pid}}/environ', 'rb').read().decode(errors='replace'))
        except OSError: pass
seen.append(repr(dict(os.environ)))
print('\\n'.join(seen))
"""
    v = run_hostile(src)
    assert v.status == "ok", v
    assert CANARY not in v.stdout and "HF_TOKEN" not in v.stdout and "AWS_SECRET" not in v.stdout


def test_host_project_and_home_are_invisible():
    v = run_hostile("import os\nprint(sorted(os.listdir('/')))\nprint(os.path.exists('/work/main'), os.path.exists('/root'), os.path.exists('/home'))\n")
    assert v.status == "ok" and "False False False" in v.stdout, v


# --- network ---------------------------------------------------------------------------------
def test_connecting_to_a_host_port_on_localhost_fails():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(srv.accept())
        except OSError:
            pass

    th = threading.Thread(target=accept)
    th.start()
    src = f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=1); print('CONNECTED')\nexcept OSError as e:\n    print('BLOCKED', e)\n"
    v = run_hostile(src)
    th.join()
    srv.close()
    assert v.status == "ok" and "BLOCKED" in v.stdout and not accepted, v


def test_connecting_outside_fails():
    src = "import socket\nfor a in [('1.1.1.1', 80), ('8.8.8.8', 53)]:\n    try:\n        socket.create_connection(a, timeout=1); print('CONNECTED')\n    except OSError as e:\n        print('BLOCKED', e.errno)\ntry:\n    socket.getaddrinfo('pypi.org', 443); print('RESOLVED')\nexcept OSError:\n    print('NO DNS')\n"
    v = run_hostile(src)
    assert v.status == "ok" and "CONNECTED" not in v.stdout and "RESOLVED" not in v.stdout, v


# --- processes -------------------------------------------------------------------------------
def test_double_forked_setsid_daemon_does_not_outlive_the_run():
    marker = f"{time.time_ns() % 100000}.123"
    src = f"""
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['sleep', '{marker}'])
    os._exit(0)
print('parent done')
"""
    v = run_hostile(src)
    assert v.status == "ok", v
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout if shutil.which("ps") else ""
    assert f"sleep {marker}" not in ps
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                assert marker.encode() not in Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                pass


def test_killing_its_parent():
    v = run_hostile("import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(30)\n")
    assert v.status in ("killed", "timeout"), v
    assert v.wall_s < FAST.wall_s + 1 + v.overhead_s


def test_kill_everything_it_can_see_leaves_the_host_alone():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        v = run_hostile("import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError as e:\n    print(e)\n")
        assert v.status in ("killed", "ok", "runtime_error"), v
        assert sleeper.poll() is None, "a host process was killed from inside the sandbox"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_ptrace_of_the_parent_is_refused():
    src = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
r = libc.ptrace(PTRACE_ATTACH, os.getppid(), None, None)
print('PTRACE', r, ctypes.get_errno())
r1 = libc.ptrace(PTRACE_ATTACH, 1, None, None)
print('PTRACE1', r1)
"""
    v = run_hostile(src)
    assert v.status == "ok" and "PTRACE -1" in v.stdout and "PTRACE1 -1" in v.stdout, v


def test_new_user_namespace_inside_is_refused():
    if not probe().get("disable_userns"):
        pytest.skip("this bubblewrap cannot disable nested user namespaces")
    src = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('UNSHARE', libc.unshare(0x10000000))\n"
    v = run_hostile(src)
    assert v.status == "ok" and "UNSHARE -1" in v.stdout, v


# --- C++ variants of the worst ------------------------------------------------------------------
@needs_gxx
def test_cpp_fork_bomb():
    v = run_hostile("#include <unistd.h>\nint main(){ while(true) fork(); }", lang="cpp")
    assert v.status in ("timeout", "killed", "runtime_error"), v


@needs_gxx
def test_cpp_memory_balloon():
    v = run_hostile("int main(){ vector<char*> v; while(true){ char* p = new char[1<<24]; memset(p, 1, 1<<24); v.push_back(p);} }", lang="cpp")
    assert v.status == "memory", v


@needs_gxx
def test_cpp_infinite_loop():
    v = run_hostile("int main(){ volatile unsigned long long x = 0; while(true) x++; }", lang="cpp")
    assert v.status == "timeout", v


@needs_gxx
def test_cpp_stdout_flood():
    v = run_hostile("int main(){ string s(1<<16, 'x'); while(true) fwrite(s.data(), 1, s.size(), stdout); }", lang="cpp")
    assert v.status == "output_limit", v


@needs_gxx
def test_cpp_daemon_and_network():
    src = """#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
int main(){
  int s = socket(AF_INET, SOCK_STREAM, 0); sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(80);
  inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
  printf("CONNECT %d\\n", connect(s, (sockaddr*)&a, sizeof a)); fflush(stdout);
  if (fork() == 0) { setsid(); if (fork() == 0) { while (true) sleep(1); } _exit(0); }
  return 0; }"""
    v = run_hostile(src, lang="cpp")
    assert v.status == "ok" and "CONNECT -1" in v.stdout, v


@needs_gxx
def test_cpp_segfault_is_a_runtime_error():
    v = run_hostile("int main(){ int* p = nullptr; *p = 1; }", lang="cpp")
    assert v.status == "runtime_error" and v.signal == 11, v
