"""Download NVIDIA's released model and data (`recipe hub download`), DESIGN.md §7, RECIPE.md §1/§7.

``download_artifact`` resolves the requested revision to a commit, then calls ``snapshot_download`` on
that commit with the artifact's ``allow_patterns`` (``always`` + the chosen subsets) into
``<download_dir>/<ORG>/<NAME>/`` -- the Hub layout, so datasets read as ``<dir>/<config>/*.jsonl``.
It writes ``download_manifest.json`` beside the files: repo, requested revision, resolved commit, the
endpoint (without credentials), patterns, and every file with its size and sha256, each file checked
against the Hub's tree listing of that commit (LFS sha256, or git blob sha1 for small files).

Resume: files finished before an interruption are not fetched again (``.cache/huggingface`` metadata in
the local dir, checked against the resolved commit); a connection dropped mid-file is resumed by the
client's retry with an HTTP ``Range`` request (tested); a file cut off by killing the process is fetched
again from its start (huggingface_hub 2.x writes each download to a process-unique temporary file).
Mirrors: ``HF_ENDPOINT`` is read at call time.

Unsafe files -- pickle weights (``*.bin``, ``*.pt``, ``*.pkl`` ...) and Python code -- are excluded with
``ignore_patterns`` unless ``allow_unsafe=True``, which fetches them as well (``safe_load`` still refuses
to unpickle or import them unless asked). Not covered: Xet-only storage features, partial
downloads of single files, deleting files that a later revision removed (the manifest lists only files
of the resolved commit; stale local files are reported in ``stale_local_files``).
"""
from __future__ import annotations

import datetime as dt
import fnmatch
import logging
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from recipe.config.hub_section import ARTIFACT_CLI_NAMES, HubArtifact, HubSection
from recipe.hub.hub_errors import HubError, current_endpoint, hub_errors, public_endpoint
from recipe.hub.git_blob_sha import git_blob_sha1
from recipe.runs.content_hashes import sha256_file

log = logging.getLogger(__name__)

MANIFEST_NAME = "download_manifest.json"
UNSAFE_PATTERNS = ["*.bin", "*.pt", "*.pth", "*.pkl", "*.pickle", "*.ckpt", "*.joblib", "*.npy", "*.npz",
                   "*.py", "*.pyc", "*.so", "*.sh"]


def configured_revision(cfg, artifact_name: str) -> str:
    """The revision a download uses by default: ``hub.<artifact>.revision``, else the ``data`` section's pin of
    the same repo (datasets: one place per value), else ``main`` (unpinned: the download warns)."""
    art = cfg.hub.artifact(artifact_name)
    if art.revision:
        return art.revision
    key = ARTIFACT_CLI_NAMES.get(artifact_name, artifact_name)
    rel = getattr(getattr(cfg, "data", None), key, None)
    if rel is not None and getattr(rel, "repo_id", None) == art.repo_id and getattr(rel, "revision", None):
        return rel.revision
    return "main"


def default_local_dir(section: HubSection, artifact: HubArtifact) -> Path:
    return Path(section.download_dir) / artifact.repo_id


def resolve_patterns(artifact: HubArtifact, subsets: list[str] | None) -> tuple[list[str], list[str]]:
    """(chosen subsets, allow_patterns); raises a clear error for an unknown subset."""
    chosen = list(subsets) if subsets else list(artifact.default_subsets or artifact.subsets)
    unknown = [s for s in chosen if s not in artifact.subsets]
    if unknown:
        raise HubError(f"unknown subset(s) {unknown} for {artifact.repo_id}: choose from "
                       f"{', '.join(sorted(artifact.subsets))}")
    patterns = list(dict.fromkeys(artifact.always + [p for s in chosen for p in artifact.subsets[s]]))
    return chosen, patterns


def _matches(path: str, allow: list[str], ignore: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) for p in allow) and not any(fnmatch.fnmatch(path, p) for p in ignore)


def download_artifact(
    section: HubSection,
    artifact_name: str,
    *,
    subsets: list[str] | None = None,
    revision: str | None = None,
    local_dir: Path | str | None = None,
    endpoint: str | None = None,
    allow_unsafe: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Download one released artifact; returns (and writes) its download manifest.

    ``revision`` defaults to ``hub.<artifact>.revision`` (callers holding the whole config pass
    ``configured_revision(cfg, name)`` so the data section's dataset pins apply)."""
    from huggingface_hub import HfApi, __version__ as hub_version, snapshot_download

    artifact = section.artifact(artifact_name)
    endpoint = current_endpoint(endpoint)
    requested = revision or artifact.revision or "main"
    chosen, allow = resolve_patterns(artifact, subsets)
    ignore = [] if allow_unsafe else UNSAFE_PATTERNS
    if allow_unsafe:  # the user opted in: fetch the pickle/code files too (loading still refuses them by default)
        allow = allow + [p for p in UNSAFE_PATTERNS if p not in allow]
    target = Path(local_dir) if local_dir else default_local_dir(section, artifact)
    api = HfApi(endpoint=endpoint)
    with hub_errors(artifact.repo_id, artifact.repo_type, endpoint, requested):
        commit = api.repo_info(artifact.repo_id, repo_type=artifact.repo_type, revision=requested).sha
        remote = {e.path: e for e in api.list_repo_tree(artifact.repo_id, repo_type=artifact.repo_type,
                                                         revision=commit, recursive=True)
                  if getattr(e, "blob_id", None) is not None}  # files only
        wanted = sorted(p for p in remote if _matches(p, allow, ignore))
        if not wanted:
            raise HubError(f"no file of {artifact.repo_id}@{commit[:12]} matches {allow}: check the subsets "
                           f"(remote files: {sorted(remote)[:20]})")
        if requested != commit:
            key = ARTIFACT_CLI_NAMES.get(artifact_name, artifact_name)
            where = f"data.{key}.revision" if artifact.repo_type == "dataset" else f"hub.{key}.revision"
            log.warning("revision %r of %s is not a commit: this download is not pinned. Pin it with %s=%s",
                        requested, artifact.repo_id, where, commit)
        target.mkdir(parents=True, exist_ok=True)
        snapshot_download(artifact.repo_id, repo_type=artifact.repo_type, revision=commit, local_dir=target,
                          allow_patterns=allow, ignore_patterns=ignore or None, endpoint=endpoint,
                          max_workers=section.max_workers,
                          tqdm_class=None if progress else _silent_tqdm())
    files = []
    for rel in tqdm(wanted, desc="sha256", unit="file", disable=not progress or len(wanted) < 20):
        files.append(_verified_entry(target, rel, remote[rel]))
    skipped = sorted(p for p in remote if any(fnmatch.fnmatch(p, pat) for pat in ignore))
    stale = sorted(str(p.relative_to(target)) for p in target.rglob("*")
                   if p.is_file() and ".cache" not in p.relative_to(target).parts and p.name != MANIFEST_NAME
                   and str(p.relative_to(target)) not in remote)
    manifest = {
        "repo_id": artifact.repo_id,
        "repo_type": artifact.repo_type,
        "endpoint": public_endpoint(endpoint),
        "requested_revision": requested,
        "resolved_commit": commit,
        "pinned": requested == commit,
        # the Hub resolved the requested revision to this commit just now: the pin is checked from here on
        "revision_checked_against_hub": True,
        "configured_revision_verified": artifact.revision_verified,
        "subsets": chosen,
        "allow_patterns": allow,
        "ignore_patterns": ignore,
        "unsafe_files_skipped": skipped,
        "stale_local_files": stale,
        "license": artifact.license,
        "files": files,
        "total_bytes": sum(f["size"] for f in files),
        "huggingface_hub_version": hub_version,
        "downloaded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    from recipe.runs.layout import write_json_atomic

    write_json_atomic(target / MANIFEST_NAME, manifest)
    return manifest


def _verified_entry(target: Path, rel: str, remote_entry) -> dict[str, Any]:
    """Size + sha256 of a downloaded file, checked against the Hub's listing (LFS sha256 or git blob sha1)."""
    path = target / rel
    digest = sha256_file(path)
    lfs = getattr(remote_entry, "lfs", None)
    if lfs is not None:
        expected, got, how = lfs.sha256, digest, "lfs-sha256"
    else:
        expected, got, how = remote_entry.blob_id, git_blob_sha1(path), "git-blob-sha1"
    if expected != got:
        raise HubError(f"{path}: {how} {got} differs from the Hub's {expected} (interrupted or altered "
                       "download): delete the file and download again")
    return {"path": rel, "size": path.stat().st_size, "sha256": digest, "verified": how}


def _silent_tqdm():
    from tqdm.auto import tqdm

    class _Silent(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return _Silent
