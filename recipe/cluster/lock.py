"""The container lock: image digest, NeMo-RL tag/commit/submodules, stack versions, container fingerprint.

``containers/nemo-rl.lock.json`` pins the release image by digest together with its git tag and submodule SHAs
(NEMO_RL.md §1.1, §9 pain point 3). The registry is not reachable from every machine, so the digest is resolved
where it can be: ``resolve_digest`` asks ``skopeo`` (``skopeo inspect``), ``docker`` (``docker buildx imagetools
inspect``) or, when only ``enroot`` is present (enroot cannot print digests), the registry's HTTP API directly
(anonymous bearer token, ``HEAD /v2/<repo>/manifests/<tag>`` -> ``Docker-Content-Digest``). Submodule SHAs come
from a NeMo-RL checkout at the tag (``git ls-tree``), the fingerprint from the image
(``/opt/nemo_rl_container_fingerprint``) or ``--fingerprint``.

Rendering refuses while the lock has no digest (``require_pinned``) unless ``allow_unpinned``; that choice is
written into provenance and as a warning at the top of the launch script.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field

from recipe.cluster.release import CONTAINER_FINGERPRINT_FILE, RELEASE_COMMIT, RELEASE_TAG

DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
SUBMODULES = ("3rdparty/Megatron-Bridge", "3rdparty/Automodel", "3rdparty/Gym-workspace/Gym")


class NemoRLPin(BaseModel):
    model_config = ConfigDict(extra="forbid")
    git_tag: str = RELEASE_TAG
    commit: str = RELEASE_COMMIT
    submodules: dict[str, Optional[str]] = Field(default_factory=lambda: {s: None for s in SUBMODULES})


class ModelPin(BaseModel):
    """A released model the cascade depends on (the paper's released checkpoint: chat template, comparisons)."""

    model_config = ConfigDict(extra="forbid")
    repo_id: str
    revision: str = Field(pattern=r"^[0-9a-f]{40}$")
    verified: bool = Field(False, description="Checked against the Hub (a download resolved it); False = taken from "
                                              "a public record only.")
    source: str = ""


class Lock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str
    tag: str
    digest: Optional[str] = Field(None, pattern=r"^sha256:[0-9a-f]{64}$")
    nemo_rl: NemoRLPin = Field(default_factory=NemoRLPin)
    versions: dict[str, str] = Field(default_factory=dict, description="Stack of the release (NEMO_RL.md §1.1).")
    container_fingerprint: Optional[str] = None
    released_model: Optional[ModelPin] = None
    resolved_by: Optional[str] = None
    resolved_at: Optional[str] = None

    @property
    def pinned(self) -> bool:
        return self.digest is not None

    @property
    def image_ref(self) -> str:
        """``repo@sha256:…`` when pinned, else ``repo:tag``."""
        return f"{self.image}@{self.digest}" if self.digest else f"{self.image}:{self.tag}"

    @property
    def pyxis_ref(self) -> str:
        """pyxis/enroot image URI: registry host separated by ``#`` (``nvcr.io#nvidia/nemo-rl@sha256:…``)."""
        host, _, path = self.image.partition("/")
        return f"{host}#{path}@{self.digest}" if self.digest else f"{host}#{path}:{self.tag}"


class UnpinnedError(RuntimeError):
    pass


def read_lock(path: Path) -> Lock:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"container lock {path} not found; it ships with the project (containers/) — "
                                f"restore it or point cluster.container.lock_file at it")
    return Lock.model_validate_json(path.read_text())


def write_lock(path: Path, lock: Lock) -> None:
    Path(path).write_text(json.dumps(lock.model_dump(mode="json"), indent=2) + "\n")


def require_pinned(lock: Lock, lock_path: Path, *, allow_unpinned: bool) -> list[str]:
    """Warnings to record (empty when pinned); raises UnpinnedError with the fix when not allowed."""
    if lock.pinned:
        return []
    msg = (f"container {lock.image}:{lock.tag} is not pinned: {lock_path} has no digest. Pin it on a machine that "
           f"reaches the registry with `recipe cluster lock` (uses skopeo, docker or the registry API), commit "
           f"the lock, and render again; or pass --allow-unpinned to render against the moving tag (recorded in "
           f"provenance and as a warning in the launch script)")
    if not allow_unpinned:
        raise UnpinnedError(msg)
    return [f"UNPINNED CONTAINER: {lock.image}:{lock.tag} is used by tag, not digest; the image can change "
            f"under this job. Pin it with: recipe cluster lock"]


Runner = Callable[[list[str]], str]


def _run(cmd: list[str]) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout


def _via_skopeo(ref: str, run: Runner) -> str:
    return run(["skopeo", "inspect", "--format", "{{.Digest}}", f"docker://{ref}"])


def _via_docker(ref: str, run: Runner) -> str:
    return run(["docker", "buildx", "imagetools", "inspect", ref])


def _via_http(ref: str, _run: Runner) -> str:
    host, _, rest = ref.partition("/")
    repo, _, tag = rest.rpartition(":")
    url = f"https://{host}/v2/{repo}/manifests/{tag}"
    accept = ", ".join([
        "application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json", "application/vnd.oci.image.manifest.v1+json"])
    req = urllib.request.Request(url, method="HEAD", headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.headers.get("Docker-Content-Digest", "")
    except urllib.error.HTTPError as e:
        if e.code != 401:
            raise
        m = dict(re.findall(r'(\w+)="([^"]*)"', e.headers.get("WWW-Authenticate", "")))
        tok_url = f"{m['realm']}?service={m.get('service', '')}&scope={m.get('scope', f'repository:{repo}:pull')}"
        with urllib.request.urlopen(tok_url, timeout=30) as r:
            token = json.loads(r.read()).get("token")
        req = urllib.request.Request(url, method="HEAD", headers={"Accept": accept, "Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.headers.get("Docker-Content-Digest", "")


TOOLS: dict[str, Callable[[str, Runner], str]] = {"skopeo": _via_skopeo, "docker": _via_docker, "enroot": _via_http}


def available_tools(which: Callable[[str], Optional[str]] = shutil.which) -> list[str]:
    return [t for t in TOOLS if which(t)]


def resolve_digest(image: str, tag: str, *, tool: Optional[str] = None, run: Runner = _run,
                   which: Callable[[str], Optional[str]] = shutil.which) -> tuple[str, str]:
    """(digest, tool used). Tries the given tool or every available one in order; errors name each failure."""
    ref = f"{image}:{tag}"
    tools = [tool] if tool else available_tools(which)
    if not tools:
        raise RuntimeError(f"cannot resolve the digest of {ref}: none of skopeo, docker, enroot is installed here. "
                           f"Run `recipe cluster lock` on a login node that has one of them and registry access.")
    errors = []
    for t in tools:
        if t not in TOOLS:
            raise ValueError(f"unknown tool {t!r}; choose one of {sorted(TOOLS)}")
        try:
            out = TOOLS[t](ref, run)
        except Exception as e:  # noqa: BLE001 - every tool failure is reported with its tool name
            errors.append(f"{t}: {e}")
            continue
        m = DIGEST_RE.search(out or "")
        if m:
            return m.group(0), t
        errors.append(f"{t}: no sha256 digest in its output {out[:200]!r}")
    raise RuntimeError(f"cannot resolve the digest of {ref}: " + "; ".join(errors))


def submodule_shas(nemo_rl_dir: Path, run: Runner = _run) -> dict[str, str]:
    """Submodule SHAs recorded by the NeMo-RL commit checked out in ``nemo_rl_dir`` (must be the pinned tag)."""
    head = run(["git", "-C", str(nemo_rl_dir), "rev-parse", "HEAD"]).strip()
    if head != RELEASE_COMMIT:
        raise RuntimeError(f"{nemo_rl_dir} is at {head}, not {RELEASE_TAG} ({RELEASE_COMMIT}); "
                           f"run `git -C {nemo_rl_dir} checkout {RELEASE_TAG}`")
    out = {}
    for sub in SUBMODULES:
        line = run(["git", "-C", str(nemo_rl_dir), "ls-tree", "HEAD", sub]).strip()
        m = re.match(r"^160000 commit ([0-9a-f]{40})\t", line)
        if not m:
            raise RuntimeError(f"{nemo_rl_dir}: no submodule entry for {sub} (got {line!r})")
        out[sub] = m.group(1)
    return out


def fingerprint_from_image(lock: Lock, tool: str, run: Runner = _run) -> str:
    if tool == "docker":
        return run(["docker", "run", "--rm", "--entrypoint", "cat", lock.image_ref, CONTAINER_FINGERPRINT_FILE]).strip()
    raise RuntimeError(f"reading the fingerprint needs docker (got {tool!r}); on a pyxis cluster run "
                       f"`srun --container-image={lock.pyxis_ref} cat {CONTAINER_FINGERPRINT_FILE}` and pass the "
                       f"value with --fingerprint")


def update_lock(path: Path, *, digest: Optional[str] = None, tool: Optional[str] = None,
                submodules: Optional[dict[str, str]] = None, fingerprint: Optional[str] = None) -> Lock:
    lock = read_lock(path)
    data: dict[str, Any] = lock.model_dump()
    if digest:
        data["digest"] = digest
        data["resolved_by"] = tool
        data["resolved_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if submodules:
        data["nemo_rl"]["submodules"] = submodules
    if fingerprint:
        data["container_fingerprint"] = fingerprint.strip()
    new = Lock.model_validate(data)
    write_lock(path, new)
    return new
