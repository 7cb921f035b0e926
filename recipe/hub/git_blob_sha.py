"""Git's blob sha1 of a file, alone or with its sha256 in one read: what the Hub reports for non-LFS files, for download
manifests and publish comparisons (a file's sha256 alone: ``recipe.runs.content_hashes.sha256_file``)."""
from __future__ import annotations

import hashlib
from pathlib import Path

_CHUNK = 1 << 20


def git_blob_sha1(path: Path) -> str:
    """Git's object id of a file's bytes (what the Hub reports as ``blob_id`` for non-LFS files)."""
    size = Path(path).stat().st_size
    h = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def sha256_and_git_sha1(path: Path) -> tuple[str, str]:
    """Both digests in one read (publish compares with LFS sha256 or git blob sha1, whichever the Hub has)."""
    size = Path(path).stat().st_size
    h256, h1 = hashlib.sha256(), hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h256.update(block)
            h1.update(block)
    return h256.hexdigest(), h1.hexdigest()
