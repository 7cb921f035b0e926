"""Pytest helpers to start the loopback Hub server (``server.py``) for one test module or session.

``HubServer.start(root)`` picks a free 127.0.0.1 port, starts the server in a child process, waits until
it answers (it starts in ~1-2 s) and returns the handle; ``stop()`` terminates it (it also exits by
itself when the test process dies). ``seed_repo`` commits files into a served repository.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from recipe.serve.vllm_server import free_port

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gitrepo  # noqa: E402


class _PortTaken(Exception):
    pass


@dataclass
class HubServer:
    root: Path
    port: int
    proc: subprocess.Popen

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, root: Path, timeout: float = 30.0, attempts: int = 3) -> "HubServer":
        """Start on a free port; retries on a new port if another process took the chosen one meanwhile."""
        root.mkdir(parents=True, exist_ok=True)
        for attempt in range(attempts):
            try:
                return cls._start_once(root, timeout)
            except _PortTaken:
                if attempt == attempts - 1:
                    raise RuntimeError("hub test server: every chosen port was taken by another process")
        raise AssertionError("unreachable")

    @classmethod
    def _start_once(cls, root: Path, timeout: float) -> "HubServer":
        port = free_port()
        log_path = root / "server.log"
        log = log_path.open("w")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        proc = subprocess.Popen([sys.executable, str(HERE / "server.py"), "--root", str(root), "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                text = log_path.read_text()
                if "address already in use" in text.lower():
                    raise _PortTaken()
                raise RuntimeError(f"hub test server exited early: {text[-2000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/validate-yaml", data=b"{}", timeout=1)
                return cls(root=root, port=port, proc=proc)
            except urllib.error.HTTPError as exc:
                proc.kill()
                raise RuntimeError(f"hub test server answered {exc.code} to its health check") from exc
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise RuntimeError(f"hub test server did not answer within {timeout} s: {log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def seed_repo(self, repo_type: str, repo_id: str, files: dict[str, bytes], branch: str = "main",
                  lfs: tuple[str, ...] = (".safetensors", ".bin")) -> str:
        """Create (if needed) and commit ``files`` to ``repo_id``; files ending in ``lfs`` become LFS pointers."""
        path = gitrepo.repo_path(self.root, repo_type, repo_id)
        if not path.exists():
            gitrepo.init_repo(path)
        if not gitrepo.branch_exists(path, branch):
            gitrepo.create_branch(path, branch)
        add = {}
        for rel, data in files.items():
            if rel.endswith(lfs):
                oid = gitrepo.store_lfs_object(path, data)
                add[rel] = gitrepo.LFS_POINTER.format(oid=oid, size=len(data)).encode()
            else:
                add[rel] = data
        return gitrepo.commit(path, branch, "seed", add, [], [])

    def requests_log(self) -> list[dict]:
        import json

        p = self.root / "requests.jsonl"
        return [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []

    def set_flaky(self, paths_in_repo: list[str]) -> None:
        import json

        (self.root / "flaky.json").write_text(json.dumps(paths_in_repo))

    def set_gated(self, repo_ids: list[str]) -> None:
        import json

        (self.root / "gated.json").write_text(json.dumps(repo_ids))
