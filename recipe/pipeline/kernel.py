"""The kernel manager papermill uses for our notebooks: IPC sockets in a private temp dir instead of TCP on
loopback, so no port is opened and ipykernel does not warn about unencrypted TCP at every notebook start."""
from __future__ import annotations

import os
import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager
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
