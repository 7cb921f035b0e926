"""Content hashes of stage inputs: files, checkpoint folders and config sections."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from time import time_ns

# Digests of large files already read by this process, by their stat identity (as git's index does): a stage hashes
# its input checkpoint, and later stages and the eval phase hash the same 540 MB of a small-profile checkpoint again.
# A rewritten file has a new inode or a new change time, so it is read again. Only files whose change time is
# SETTLED_S old are remembered: timestamps advance by the kernel's clock tick, so a file written again within the same
# tick as the read could keep its stat (git's "racy" entries).
_MEMO: dict[tuple[int, int, int, int, int], str] = {}
_MEMO_MIN_BYTES = 1 << 20
SETTLED_S = 2.0


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key in _MEMO:
        return _MEMO[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    digest = h.hexdigest()
    if st.st_size >= _MEMO_MIN_BYTES and time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_S * 1e9:
        _MEMO[key] = digest
    return digest


def sha256_dir(path: Path) -> str:
    """Hash of every file's relative path and content in a folder (a checkpoint)."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(path)).encode())
            h.update(sha256_file(p).encode())
    return h.hexdigest()


def sha256_obj(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()
