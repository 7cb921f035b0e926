"""The kernel manager papermill uses for our notebooks: IPC sockets in a private temp dir instead of TCP on
loopback, so no port is opened and ipykernel does not warn about unencrypted TCP at every notebook start."""
from __future__ import annotations

import os
import queue
import re
import shutil
import tempfile
import time

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from traitlets import CaselessStrEnum, default


class IPCKernelManager(AsyncKernelManager):
    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("ip")
    def _default_ip(self) -> str:  # for IPC, "ip" is the socket path prefix
        return os.path.join(tempfile.mkdtemp(prefix="recipe-kernel-"), "kernel")

    def cleanup_ipc_files(self) -> None:
        """Remove the sockets and then their private directory."""
        super().cleanup_ipc_files()
        shutil.rmtree(os.path.dirname(self.ip), ignore_errors=True)


class SharedKernel:
    """One kernel for every notebook of a ``recipe run``: the kernel start-up and the import of torch,
    transformers and ``recipe`` (several seconds each) are paid once instead of once per phase.

    Before each notebook the kernel's namespace is reset (``InteractiveShell.reset``: variables and history go,
    imported modules stay), so a notebook never sees another's variables and its cells count from 1. A kernel
    that died (or was never started) is started afresh. Training code seeds every step itself, so results equal
    those of one kernel per notebook (tests/test_pipeline_e2e.py runs whole cascades back to back in one
    process and compares them)."""

    def __init__(self, cwd: str, kernel_name: str = "python3", startup_code: str = ""):
        self.cwd, self.kernel_name, self.km, self.startup_code = cwd, kernel_name, None, startup_code
        self.starts = 0                      # kernels started so far (1 for a healthy run)
        self._pending = None                 # (client, msg id) of a start-up code still running (start_early)

    def manager(self) -> "IPCKernelManager":
        """The kernel's manager, started (with its start-up code) if needed, its namespace reset: a notebook sees
        no name of the start-up code's or of an earlier notebook's."""
        if self._pending is not None:
            self._finish_startup()
        elif self.km is None or not run_sync(self.km.is_alive)():
            self._start()
            if self.startup_code:
                self._execute(self.startup_code)
        self._reset_namespace()
        return self.km

    def start_early(self) -> None:
        """Start the kernel and send it the start-up code without waiting for either: the caller goes on (e.g.
        runs the data notebook on a kernel of its own) while this kernel imports torch and transformers on the
        other core. The next :meth:`manager` call waits for the start-up code and raises its error, if any."""
        if self.km is not None or not self.startup_code:
            return
        self._start()
        kc = self.km.blocking_client()
        kc.start_channels()
        # sent before the kernel is up: the shell socket queues it until the kernel binds (no wait_for_ready)
        self._pending = (kc, kc.execute(self.startup_code, silent=True, store_history=False))

    def _start(self) -> None:
        self.close()
        self.km = IPCKernelManager(kernel_name=self.kernel_name)
        run_sync(self.km.start_kernel)(cwd=self.cwd)
        self.starts += 1

    def _finish_startup(self, timeout: float = 300) -> None:
        kc, msg_id = self._pending
        self._pending = None
        try:
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not run_sync(self.km.is_alive)():
                    raise RuntimeError(f"the shared kernel did not finish its start-up code {self.startup_code!r} "
                                       f"({'timed out' if left <= 0 else 'the kernel died'})")
                try:
                    msg = kc.get_shell_msg(timeout=min(left, 1.0))
                except queue.Empty:
                    continue
                if msg["parent_header"].get("msg_id") == msg_id:
                    break
        finally:
            kc.stop_channels()
        if msg["content"]["status"] != "ok":
            raise RuntimeError(f"the shared kernel could not run {self.startup_code!r}: {msg['content']}")

    def _reset_namespace(self) -> None:
        self._execute("get_ipython().reset(new_session=True)")

    def _interact(self, code: str, *, silent: bool, timeout: float | None, hook) -> dict:
        """One execute request on a client of its own; returns the reply's content."""
        kc = self.km.blocking_client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            return kc.execute_interactive(code, silent=silent, store_history=False, timeout=timeout,
                                          output_hook=hook)["content"]
        finally:
            kc.stop_channels()

    def _execute(self, code: str) -> None:
        """Run ``code`` silently in the kernel (no history, no output); an error in it is raised here."""
        content = self._interact(code, silent=True, timeout=60, hook=lambda msg: None)
        if content["status"] != "ok":
            raise RuntimeError(f"the shared kernel could not run {code!r}: {content}")

    def run_code(self, code: str, timeout: float | None = None) -> str:
        """Run ``code`` in the kernel (started if needed, namespace reset) and return what it printed (streams and
        the plain-text form of displayed objects); an exception in it is raised here with the kernel's traceback."""
        self.manager()
        out: list[str] = []

        def hook(msg):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                out.append(content["data"].get("text/plain", "") + "\n")

        c = self._interact(code, silent=False, timeout=timeout, hook=hook)
        if c["status"] != "ok":
            tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(c.get("traceback", [])))
            raise RuntimeError(f"{c.get('ename')}: {c.get('evalue')} (in the shared kernel)\n{tb}")
        return "".join(out)

    def close(self, now: bool = False) -> None:
        """Shut the kernel down; ``now``: kill it instead of asking it to exit (~2 s less: its interpreter
        teardown with torch loaded) when nothing in it is left to finish, e.g. after a run's last phase."""
        if self._pending is not None:
            self._pending[0].stop_channels()
            self._pending = None
        if self.km is not None:
            try:
                run_sync(self.km.shutdown_kernel)(now=now)
            finally:
                self.km = None

    def __enter__(self) -> "SharedKernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def register_shared_kernel_engine() -> str:
    """Register (idempotent) the papermill engine that runs a notebook on a given, already started kernel manager
    (``km=``) and closes its client channels afterwards; returns the engine's name."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args

    class SharedKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None, **kwargs):
            kwargs = remove_args(["input_path", "timeout", "startup_timeout"], **kwargs)
            client = PapermillNotebookClient(nb_man, **merge_kwargs(
                kwargs, timeout=execution_timeout, startup_timeout=start_timeout, kernel_name=kernel_name, log=logger,
                log_output=log_output, stdout_file=stdout_file, stderr_file=stderr_file))
            try:
                return client.execute()
            finally:
                if client.kc is not None:
                    client.kc.stop_channels()

    papermill_engines.register("recipe-shared-kernel", SharedKernelEngine)
    return "recipe-shared-kernel"
