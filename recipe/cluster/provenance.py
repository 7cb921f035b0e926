"""Provenance of a rendered stage: git commit and dirty state, code snapshot, config hash, data revisions.

Rules (NEMO_RL.md §9 "borrowed patterns", open-instruct): rendering from a dirty git tree is refused unless
``allow_dirty``; every render records the commit, the image digest (or the unpinned warning), the hash of the
resolved recipe config and of the rendered NeMo-RL YAML, and what is known about the data (file sha256 and any
``source.json`` written by data preparation). The code snapshot is a copy of exactly what a running job
executes, so later edits in the checkout cannot change it (NVIDIA's ``tools/code_snapshot.sh`` pattern).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Optional

from recipe.runs.content_hashes import sha256_file

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class DirtyTreeError(RuntimeError):
    pass


def _git(root: Path, *args: str) -> Optional[str]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                              timeout=60).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


def git_state(root: Path = PROJECT_ROOT) -> dict[str, Any]:
    """{commit, dirty, changed: [paths]} — commit None when ``root`` is not a git work tree (or has no commit)."""
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain")
    changed = [line[3:] for line in (status or "").splitlines() if line.strip()]
    return {"commit": commit.strip() if commit else None, "dirty": bool(changed) or commit is None,
            "changed": changed[:50]}


def check_clean(state: dict[str, Any], *, allow_dirty: bool, root: Path = PROJECT_ROOT) -> list[str]:
    if not state["dirty"]:
        return []
    what = ("is not a git checkout with a commit" if state["commit"] is None
            else f"has uncommitted changes ({', '.join(state['changed'][:5])}{'…' if len(state['changed']) > 5 else ''})")
    if not allow_dirty:
        raise DirtyTreeError(f"{root} {what}: a rendered job must be reproducible from a commit. Commit (or stash) "
                             f"the changes and render again, or pass --allow-dirty (recorded in provenance).")
    return [f"DIRTY TREE: {root} {what}; the code snapshot holds the working-tree files, not commit {state['commit']}"]


def snapshot_code(dest: Path, *, state: dict[str, Any], root: Path = PROJECT_ROOT) -> Path:
    """Copy the code a job runs into ``dest`` (committed files via ``git archive`` when clean; tracked + untracked
    non-ignored working-tree files when dirty; the package and ``containers/`` when not a git checkout)."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if state["commit"] and not state["dirty"]:
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", "HEAD"], check=True,
                                 capture_output=True, timeout=120).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True, timeout=120)
        return dest
    listing = _git(root, "ls-files", "-co", "--exclude-standard") if state["commit"] else None
    files = listing.splitlines() if listing else [
        str(p.relative_to(root)) for top in ("recipe", "containers", "pyproject.toml")
        for p in ([root / top] if (root / top).is_file() else (root / top).rglob("*")) if p.is_file()]
    for rel in files:
        src = root / rel
        if src.is_file() and "__pycache__" not in rel:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def data_revisions(data_dir: Path) -> dict[str, Any]:
    """What is known about a stage's NeMo-Gym data: per split path, existence, sha256; plus ``source.json``
    (dataset id + revision written by data preparation) when present."""
    data_dir = Path(data_dir)
    out: dict[str, Any] = {}
    for split in ("train", "validation"):
        p = data_dir / f"{split}.jsonl"
        out[split] = {"path": str(p), "exists": p.is_file(), "sha256": sha256_file(p) if p.is_file() else None}
    src = data_dir / "source.json"
    out["source"] = json.loads(src.read_text()) if src.is_file() else None
    return out
