"""Loopback Hub-compatible server: olah (offline) for reads, plus the write endpoints the client calls.

Run as ``python tests/hub_server/server.py --root DIR --port PORT`` (binds 127.0.0.1 only). It stops by
itself when its parent process exits or after ``--max-lifetime`` seconds. Facts it relies on come from
``../shared/docs/HUB_TESTING.md`` (huggingface_hub 2.4 / olah 0.5.4):

- reads: olah serves the git repositories under ``<root>/{models,datasets}/<org>/<name>``;
- writes (ours): ``/api/repos/create``, ``/api/validate-yaml``, ``preupload``, the LFS ``basic`` batch
  + ``PUT`` transfer, NDJSON ``commit`` and ``branch`` creation, committed into those same git repos;
- patches to olah's offline defects: revision-less ``/api/{type}s/{org}/{name}`` answers the ``main``
  head; a missing file in an existing repo answers 404 ``EntryNotFound`` and a missing revision 404
  ``RevisionNotFound`` (olah says 401 ``RepoNotFound`` for both);
- ``Range`` requests on ``resolve`` answer 206 with the requested slice (so client resume is observable);
- ``whoami-v2`` answers locally (olah would forward it to the real Hub);
- files listed in ``<root>/flaky.json`` (paths in repo) break their first download halfway through;
- repos listed in ``<root>/gated.json`` answer 403 ``GatedRepo`` to everyone (no access is ever granted);
- every request is appended to ``<root>/requests.jsonl`` (method, path, range, status, whether an
  Authorization header was sent — never the header's value).

Not covered: Xet (clients must set ``HF_HUB_DISABLE_XET=1``), multipart LFS, pull requests, auth checks.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import threading
import time
from urllib.parse import unquote
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gitrepo  # noqa: E402
from fastapi import Request, Response  # noqa: E402  (module level: route annotations are resolved here)

LFS_MIN_SIZE = 1024  # files this size or larger (or any .safetensors/.parquet) go through LFS


def _write_olah_config(root: Path, port: int) -> Path:
    cfg = root / "olah.toml"
    netloc = f"127.0.0.1:{port}"
    cfg.write_text(
        "[basic]\n"
        f'host = "127.0.0.1"\nport = {port}\n'
        f'repos-path = "{root / "_olah_cache"}"\n'
        f'mirror-scheme = "http"\nmirror-netloc = "{netloc}"\nmirror-lfs-netloc = "{netloc}"\n'
        f'mirrors-path = ["{root}"]\n'
        "[accessibility]\noffline = true\n"
    )
    return cfg


def build_app(root: Path, port: int):
    os.environ["OLAH_CONFIG"] = str(_write_olah_config(root, port))
    os.environ["OLAH_LOG_PATH"] = str(root / "_olah_logs")
    from fastapi.responses import JSONResponse
    from fastapi.routing import APIRoute
    from olah import server as olah_server
    from olah.server_api_routes import meta_proxy_common

    app = olah_server.app
    base = f"http://127.0.0.1:{port}"
    log_file = root / "requests.jsonl"
    lock = threading.Lock()

    def gated() -> set[str]:
        p = root / "gated.json"
        return set(json.loads(p.read_text())) if p.exists() else set()

    dropped: set[str] = set()

    def flaky() -> set[str]:
        p = root / "flaky.json"
        return set(json.loads(p.read_text())) if p.exists() else set()

    async def _drop_midway(response):
        """Send half the body, then break the connection (the client must resume with a Range request)."""
        from starlette.responses import StreamingResponse

        body = b"".join([chunk async for chunk in response.body_iterator])

        async def half_then_break():
            yield body[: len(body) // 2]
            raise ConnectionAbortedError("hub test server: connection dropped on purpose")

        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers["content-length"] = str(len(body))
        return StreamingResponse(half_then_break(), status_code=200, headers=headers)

    def rpath(repo_type: str, repo_id: str) -> Path:
        return gitrepo.repo_path(root, repo_type, repo_id)

    def err(status: int, code: str, msg: str) -> JSONResponse:
        return JSONResponse({"error": msg}, status_code=status,
                            headers={"x-error-code": code, "x-error-message": msg})

    def is_lfs(path: str, size: int, sample_b64: str = "") -> bool:
        try:  # olah decodes every non-LFS blob as UTF-8 when listing trees: binary files must be LFS
            base64.b64decode(sample_b64 or "").decode("utf-8")
        except UnicodeDecodeError:
            return True
        return size >= LFS_MIN_SIZE or path.endswith((".safetensors", ".parquet", ".bin"))

    # ---- write routes -------------------------------------------------------------------------
    async def create_repo(request: Request):
        body = await request.json()
        repo_type = body.get("type") or "model"
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else f"user/{body['name']}"
        path = rpath(repo_type, repo_id)
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        if path.exists():  # the Hub's 409 body carries the url too (huggingface_hub reads it with exist_ok)
            return JSONResponse({"error": "You already created this repo", "url": f"{base}/{prefix}{repo_id}"},
                                status_code=409, headers={"x-error-code": "RepoExists",
                                                          "x-error-message": "You already created this repo"})
        with lock:
            gitrepo.init_repo(path)
            if body.get("visibility") == "private" or body.get("private"):
                (path / ".git" / "hub-private").write_text("1")
        return {"url": f"{base}/{prefix}{repo_id}", "name": repo_id}

    async def validate_yaml(request: Request):
        return {"errors": [], "warnings": []}

    async def whoami(request: Request):
        if not request.headers.get("authorization"):
            return err(401, "Unauthorized", "Invalid credentials in Authorization header")
        return {"type": "user", "name": "test-user", "fullname": "Test User", "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": "test", "role": "write"}}}

    async def preupload(repo_type: str, org: str, name: str, rev: str, request: Request):
        path = rpath(repo_type[:-1], f"{org}/{name}")
        if not path.exists():
            return err(404, "RepoNotFound", "Repository not found")
        body = await request.json()
        files = [{"path": f["path"], "uploadMode": "lfs" if is_lfs(f["path"], f["size"], f.get("sample", "")) else "regular",
                  "shouldIgnore": False} for f in body["files"]]
        return {"files": files, "commitOid": gitrepo.resolve(path, rev)}

    async def lfs_batch(repo_type: str, org: str, name: str, request: Request):
        path = rpath(repo_type, f"{org}/{name.removesuffix('.git')}")
        if not path.exists():
            return err(404, "RepoNotFound", "Repository not found")
        body = await request.json()
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        objects = []
        for obj in body["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"]}
            if not gitrepo.lfs_object_exists(path, obj["oid"]):
                entry["actions"] = {"upload": {
                    "href": f"{base}/_lfs_upload/{prefix}{org}/{name.removesuffix('.git')}/{obj['oid']}"}}
            objects.append(entry)
        return JSONResponse({"transfer": "basic", "objects": objects},
                            media_type="application/vnd.git-lfs+json")

    async def lfs_put(rest: str, request: Request):
        *repo_parts, oid = rest.split("/")
        repo_type = "dataset" if repo_parts[0] == "datasets" else "model"
        repo_id = "/".join(repo_parts[1:] if repo_type == "dataset" else repo_parts)
        data = await request.body()
        path = rpath(repo_type, repo_id)
        if gitrepo.store_lfs_object(path, data) != oid:
            return err(400, "BadRequest", "sha256 of the uploaded bytes does not match the oid")
        return Response(status_code=200)

    async def commit(repo_type: str, org: str, name: str, rev: str, request: Request):
        path = rpath(repo_type[:-1], f"{org}/{name}")
        if not path.exists():
            return err(404, "RepoNotFound", "Repository not found")
        branch = rev
        if gitrepo.resolve(path, branch) is None:
            return err(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        summary, add, delete, delete_folders, parent = "commit", {}, [], [], None
        for line in (await request.body()).decode().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                summary = value.get("summary") or summary
                parent = value.get("parentCommit")
            elif key == "file":
                add[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if not gitrepo.lfs_object_exists(path, value["oid"]):
                    return err(400, "BadRequest", f"LFS object {value['oid']} was never uploaded")
                add[value["path"]] = gitrepo.LFS_POINTER.format(oid=value["oid"], size=value["size"]).encode()
            elif key == "deletedFile":
                delete.append(value["path"])
            elif key == "deletedFolder":
                delete_folders.append(value["path"])
        with lock:
            if parent and gitrepo.resolve(path, branch) != parent:
                return err(412, "PreconditionFailed", f"A commit has happened since {parent}. Please refresh and try again.")
            oid = gitrepo.commit(path, branch, summary, add, delete, delete_folders)
        prefix = "" if repo_type == "models" else f"{repo_type}/"
        return {"commitUrl": f"{base}/{prefix}{org}/{name}/commit/{oid}", "commitOid": oid,
                "pullRequestUrl": None, "success": True}

    async def branch(repo_type: str, org: str, name: str, branch: str, request: Request):
        path = rpath(repo_type[:-1], f"{org}/{name}")
        if not path.exists():
            return err(404, "RepoNotFound", "Repository not found")
        if gitrepo.branch_exists(path, branch):
            return err(409, "Conflict", f"Reference already exists: refs/heads/{branch}")
        body = await request.json() if (await request.body()) else {}
        with lock:
            gitrepo.create_branch(path, branch, body.get("startingPoint") or "main")
        return {}

    async def meta_latest(repo_type: str, org: str, name: str, request: Request):
        path = rpath(repo_type[:-1], f"{org}/{name}")
        head = gitrepo.resolve(path, "main") if path.exists() else None
        if head is None:
            return err(401, "RepoNotFound", "Repository not found")
        return await meta_proxy_common(app, repo_type=repo_type, org=org, repo=name, commit=head,
                                       method=request.method.lower(),
                                       authorization=request.headers.get("authorization"))

    ours = [
        ("/api/repos/create", create_repo, ["POST"]),
        ("/api/validate-yaml", validate_yaml, ["POST"]),
        ("/api/whoami-v2", whoami, ["GET"]),
        ("/api/{repo_type}/{org}/{name}/preupload/{rev:path}", preupload, ["POST"]),
        ("/api/{repo_type}/{org}/{name}/commit/{rev:path}", commit, ["POST"]),
        ("/api/{repo_type}/{org}/{name}/branch/{branch:path}", branch, ["POST"]),
        ("/api/{repo_type}/{org}/{name}", meta_latest, ["GET", "HEAD"]),
        ("/datasets/{org}/{name}/info/lfs/objects/batch", None, ["POST"]),
        ("/{org}/{name}/info/lfs/objects/batch", None, ["POST"]),
        ("/_lfs_upload/{rest:path}", lfs_put, ["PUT"]),
    ]

    async def lfs_batch_dataset(org: str, name: str, request: Request):
        return await lfs_batch("dataset", org, name, request)

    async def lfs_batch_model(org: str, name: str, request: Request):
        return await lfs_batch("model", org, name, request)

    ours[7] = (ours[7][0], lfs_batch_dataset, ours[7][2])
    ours[8] = (ours[8][0], lfs_batch_model, ours[8][2])
    app.router.routes[0:0] = [APIRoute(p, f, methods=m) for p, f, m in ours]

    resolve_re = re.compile(r"^/(?:(models|datasets|spaces)/)?([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$")
    api_re = re.compile(r"^/api/(models|datasets|spaces)/([^/]+)/([^/]+?)(?:\.git)?(?:/|$)")
    rev_re = re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+/(?:revision|tree)/([^/]+)")
    lfs_re = re.compile(r"^/(?:(datasets)/)?([^/]+)/([^/]+)\.git/")

    @app.middleware("http")
    async def hub_behaviour(request: Request, call_next):
        p = request.url.path
        m_res, m_api, m_lfs = resolve_re.match(p), api_re.match(p), lfs_re.match(p)
        repo_type = repo_id = None
        if m_res:
            repo_type = (m_res.group(1) or "models")[:-1]
            repo_id = f"{m_res.group(2)}/{m_res.group(3)}"
        elif m_api:
            repo_type, repo_id = m_api.group(1)[:-1], f"{m_api.group(2)}/{m_api.group(3)}"
        elif m_lfs:
            repo_type, repo_id = (m_lfs.group(1) or "models")[:-1], f"{m_lfs.group(2)}/{m_lfs.group(3)}"
        response = None
        m_rev = rev_re.match(p)
        if m_rev and repo_id and not (repo_id in gated()) and rpath(repo_type, repo_id).exists() \
                and gitrepo.resolve(rpath(repo_type, repo_id), unquote(m_rev.group(1))) is None:
            response = err(404, "RevisionNotFound", f"Invalid rev id: {unquote(m_rev.group(1))}")
        elif m_api and not rpath(repo_type, repo_id).exists():
            response = err(404, "RepoNotFound", "Repository not found")
        elif repo_id and repo_id in gated():
            response = err(403, "GatedRepo", f"Access to {repo_type} {repo_id} is restricted. You must have "
                                              "access to it and be authenticated to access it.")
        elif m_res and repo_type and rpath(repo_type, repo_id).exists():
            path = rpath(repo_type, repo_id)
            sha = gitrepo.resolve(path, m_res.group(4))
            if sha is None:
                response = err(404, "RevisionNotFound", f"Invalid rev id: {m_res.group(4)}")
            else:
                try:
                    gitrepo.git(path, "cat-file", "-e", f"{sha}:{m_res.group(5)}")
                except Exception:
                    response = err(404, "EntryNotFound", f"{m_res.group(5)} does not exist on {m_res.group(4)}")
        if response is None:
            response = await call_next(request)
            rng = request.headers.get("range")
            if m_res and not rng and request.method == "GET" and response.status_code == 200 \
                    and m_res.group(5) in flaky() and p not in dropped:
                dropped.add(p)
                response = await _drop_midway(response)
            if m_res and rng and request.method == "GET" and response.status_code == 200:
                body = b"".join([chunk async for chunk in response.body_iterator])
                start_s, _, end_s = rng.removeprefix("bytes=").partition("-")
                start, end = int(start_s), (int(end_s) if end_s else len(body) - 1)
                headers = {k: v for k, v in response.headers.items()
                           if k.lower() not in ("content-length", "content-range")}
                headers["content-range"] = f"bytes {start}-{end}/{len(body)}"
                response = Response(body[start:end + 1], status_code=206, headers=headers)
        with lock, log_file.open("a") as fh:
            fh.write(json.dumps({"method": request.method, "path": p, "range": request.headers.get("range"),
                                 "status": response.status_code,
                                 "auth": bool(request.headers.get("authorization"))}) + "\n")
        return response

    return app


def _watchdog(parent_pid: int, max_lifetime: float) -> None:
    start = time.monotonic()
    while time.monotonic() - start < max_lifetime:
        if os.getppid() != parent_pid:
            break
        time.sleep(0.5)
    os._exit(0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--max-lifetime", type=float, default=900.0)
    args = ap.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    threading.Thread(target=_watchdog, args=(os.getppid(), args.max_lifetime), daemon=True).start()
    import uvicorn

    uvicorn.run(build_app(args.root.resolve(), args.port), host="127.0.0.1", port=args.port,
                log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
