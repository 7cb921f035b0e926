"""Git plumbing for the test Hub server: create repos, commit files (regular or LFS pointer), branch.

Repositories are normal (non-bare) git repositories laid out as olah's mirrors expect:
``<root>/{models,datasets}/<org>/<name>``. Writes never touch a working tree: each commit is built
with a temporary index (``GIT_INDEX_FILE``), ``write-tree``, ``commit-tree`` and ``update-ref``, so
any branch can be written while ``main`` stays checked out. LFS objects are stored where olah reads
them: ``.git/lfs/objects/<oid[0:2]>/<oid[2:4]>/<oid>`` (no git-lfs binary needed; HUB_TESTING.md).

Not covered: pull requests, tags, squash/history rewrites, permissions.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "hub-test-server",
    "GIT_AUTHOR_EMAIL": "hub@127.0.0.1",
    "GIT_COMMITTER_NAME": "hub-test-server",
    "GIT_COMMITTER_EMAIL": "hub@127.0.0.1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": tempfile.gettempdir(),
}
LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"
GITATTRIBUTES = "*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git(repo: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
    full_env = {**os.environ, **_GIT_ENV, **(env or {})}
    out = subprocess.run(["git", "-C", str(repo), *args], input=input, env=full_env,
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


def repo_path(root: Path, repo_type: str, repo_id: str) -> Path:
    org, name = repo_id.split("/", 1)
    return root / f"{repo_type}s" / org / name


def init_repo(path: Path, files: dict[str, bytes] | None = None) -> str:
    """Create a repo with one commit on ``main`` (like the Hub's initial ``.gitattributes`` commit)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for rel, data in ({".gitattributes": GITATTRIBUTES.encode()} | (files or {})).items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial commit")
    return git(path, "rev-parse", "HEAD")


def store_lfs_object(path: Path, data: bytes) -> str:
    oid = hashlib.sha256(data).hexdigest()
    target = path / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return oid


def lfs_object_exists(path: Path, oid: str) -> bool:
    return (path / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid).is_file()


def resolve(path: Path, rev: str) -> str | None:
    try:
        return git(path, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        return None


def branch_exists(path: Path, branch: str) -> bool:
    try:
        git(path, "show-ref", "--verify", "-q", f"refs/heads/{branch}")
        return True
    except subprocess.CalledProcessError:
        return False


def create_branch(path: Path, branch: str, start: str = "main") -> str:
    sha = resolve(path, start)
    if sha is None:
        raise KeyError(start)
    git(path, "update-ref", f"refs/heads/{branch}", sha)
    return sha


def commit(path: Path, branch: str, message: str, add: dict[str, bytes], delete: list[str],
           delete_folders: list[str]) -> str:
    """Apply additions/deletions on top of ``branch`` and move the branch to the new commit."""
    parent = resolve(path, branch)
    if parent is None:
        raise KeyError(branch)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(path, "read-tree", parent, env=env)
        for rel in delete:
            git(path, "update-index", "--force-remove", rel, env=env)
        for folder in delete_folders:
            for rel in git(path, "ls-files", "--cached", folder.rstrip("/") + "/", env=env).splitlines():
                git(path, "update-index", "--force-remove", rel, env=env)
        for rel, data in add.items():
            blob = git(path, "hash-object", "-w", "--stdin", input=data)
            git(path, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = git(path, "write-tree", env=env)
    new = git(path, "commit-tree", tree, "-p", parent, "-m", message)
    git(path, "update-ref", f"refs/heads/{branch}", new, parent)
    if branch == git(path, "symbolic-ref", "--short", "HEAD"):
        git(path, "reset", "-q", "--hard", new)  # keep the checked-out tree in step (olah reads commits, not it)
    return new
