"""The in-sandbox launcher: a 50-line C helper, built once per host with the system C compiler.

It sets the run's rlimits, installs a seccomp filter (ptrace, process_vm_*, bpf, perf, keyrings,
userfaultfd, mount/unshare/setns/chroot denied with EPERM; foreign syscall ABIs killed), marks itself
non-dumpable, forks and execs the program, waits for it and reports CPU time (user + sys,
including waited-for descendants) and the wait status on a pipe the program never sees. It exists because
bubblewrap's wait chain does not carry CPU usage back to the host. Built into a root-owned cache dir
(``$RECIPE_SANDBOX_CACHE`` or ``<tmp>/recipe-sandbox-<uid>``) and bound read-only at ``/.recipe-launcher``.
Without a C compiler the sandbox falls back to ``prlimit`` (limits still apply; ``cpu_s`` is then unknown,
reported as -1, and timeouts are judged by signals and the wall clock).
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LAUNCHER_C = r"""/* recipe sandbox launcher: runs inside bubblewrap as the program's parent.
 * Sets the run's rlimits, forks, execs the program, waits for it and reports its CPU time (user+sys,
 * microseconds, including its waited-for descendants) and wait status on fd 3, which the program
 * itself never sees (close-on-exec). bubblewrap's own wait chain does not carry CPU usage back to the
 * host, hence this helper. Usage: launcher REPORT_FD CPU_S AS_BYTES NPROC FSIZE NOFILE STACK_UNLIMITED -- PROG ARGS */
#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void lim(int res, rlim_t soft, rlim_t hard) {
    struct rlimit r = {soft, hard};
    if (setrlimit(res, &r) != 0) { perror("setrlimit"); _exit(125); }
}

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

/* Deny debugging / cross-process memory / kernel-surface syscalls; a foreign syscall ABI is killed. */
static void seccomp_filter(void) {
#ifdef ARCH
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
        DENY(SYS_ptrace), DENY(SYS_process_vm_readv), DENY(SYS_process_vm_writev), DENY(SYS_bpf),
        DENY(SYS_perf_event_open), DENY(SYS_keyctl), DENY(SYS_add_key), DENY(SYS_request_key),
        DENY(SYS_userfaultfd), DENY(SYS_kexec_load), DENY(SYS_mount), DENY(SYS_umount2), DENY(SYS_unshare),
        DENY(SYS_setns), DENY(SYS_pivot_root), DENY(SYS_chroot),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp"); _exit(125);
    }
#endif
}

int main(int argc, char **argv) {
    if (argc < 10 || strcmp(argv[8], "--") != 0) { fprintf(stderr, "launcher: bad usage\n"); return 125; }
    int fd = atoi(argv[1]);
    rlim_t cpu = strtoull(argv[2], 0, 10), as = strtoull(argv[3], 0, 10), nproc = strtoull(argv[4], 0, 10);
    rlim_t fsize = strtoull(argv[5], 0, 10), nofile = strtoull(argv[6], 0, 10);
    int stack_unlimited = atoi(argv[7]);
    int report = (fd > 2 && fcntl(fd, F_GETFD) != -1) ? fd : -1;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* the program (same uid) cannot ptrace or read this launcher */
    if (report >= 0) fcntl(report, F_SETFD, FD_CLOEXEC);
    lim(RLIMIT_CORE, 0, 0);
    lim(RLIMIT_CPU, cpu, cpu + 1);
    lim(RLIMIT_FSIZE, fsize, fsize);
    lim(RLIMIT_NOFILE, nofile, nofile);
    if (stack_unlimited) lim(RLIMIT_STACK, RLIM_INFINITY, RLIM_INFINITY);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 125; }
    if (pid == 0) {
        lim(RLIMIT_AS, as, as);
        lim(RLIMIT_NPROC, nproc, nproc);
        seccomp_filter();
        execvp(argv[9], argv + 9);
        fprintf(stderr, "launcher: cannot execute %s: %s\n", argv[9], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) { if (errno != EINTR) { perror("wait4"); return 125; } }
    long long us = (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
    if (report >= 0) { dprintf(report, "%lld %d %ld\n", us, status, ru.ru_maxrss); close(report); }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 125;
}
"""


@functools.lru_cache(maxsize=1)
def launcher_path() -> str | None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("g++")
    digest = hashlib.sha256(LAUNCHER_C.encode()).hexdigest()[:12]
    cache = Path(os.environ.get("RECIPE_SANDBOX_CACHE") or Path(tempfile.gettempdir()) / f"recipe-sandbox-{os.geteuid()}")
    exe = cache / f"launcher-{digest}"
    if exe.is_file() and os.access(exe, os.X_OK) and exe.stat().st_uid == os.geteuid():
        return str(exe)
    if cc is None:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o755)
    if cache.stat().st_uid != os.geteuid():
        return None  # someone else owns the cache dir: do not trust binaries in it
    src = cache / f"launcher-{digest}.c"
    src.write_text(LAUNCHER_C)
    tmp = cache / f"launcher-{digest}.{os.getpid()}.tmp"
    r = subprocess.run([cc, "-O2", "-static", "-x", "c", str(src), "-o", str(tmp)], capture_output=True)
    if r.returncode != 0:  # static libc may be missing: dynamic is fine, /usr is bound read-only
        r = subprocess.run([cc, "-O2", "-x", "c", str(src), "-o", str(tmp)], capture_output=True)
    if r.returncode != 0:
        return None
    os.chmod(tmp, 0o755)
    os.replace(tmp, exe)
    return str(exe)
