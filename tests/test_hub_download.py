"""`recipe hub download` against a loopback Hub (olah offline + our routes): real huggingface_hub calls.

Covers: manifest contents (resolved commit, sizes, sha256), subsets -> allow_patterns, Hub layout readable
as ``<dir>/<config>/*.jsonl``, resume of a partial file (HTTP Range) and of a finished file (no refetch),
HF_ENDPOINT honoured by the CLI, and clear errors for a missing repo, a gated repo and no network.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hub_server.env import use_loopback_hub
from hub_server.fixtures import HubServer
from hub_server.tiny import seed_released
from recipe.config import load_config
from recipe.hub.download import MANIFEST_NAME, download_artifact
from recipe.hub.hub_errors import HubError, HubUnreachableError

PROJECT = Path(__file__).resolve().parents[1]
RECIPE = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()"]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hubsrv")
    server = HubServer.start(root / "srv")
    server.commits = seed_released(server, root, root / "EVIL_RAN")
    server.evil_marker = root / "EVIL_RAN"
    yield server
    server.stop()


@pytest.fixture()
def section(hub, monkeypatch, tmp_path):
    use_loopback_hub(monkeypatch, hub.endpoint, tmp_path / "hf_home")
    return load_config("tiny", overrides=[f"hub.download_dir={tmp_path / 'downloads'}"]).hub


def test_manifest_records_commit_sizes_and_sha256(hub, section, tmp_path):
    m = download_artifact(section, "rl-data", subsets=["MOPD"], progress=False)
    target = tmp_path / "downloads" / "nvidia" / "Nemotron-Cascade-2-RL-data"
    assert json.loads((target / MANIFEST_NAME).read_text()) == m
    assert m["requested_revision"] == "main" and m["pinned"] is False
    assert m["resolved_commit"] == hub.commits["nvidia/Nemotron-Cascade-2-RL-data"]
    assert [f["path"] for f in m["files"]] == ["MOPD/train.jsonl", "README.md"]  # subset + always
    for f in m["files"]:
        data = (target / f["path"]).read_bytes()
        assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
        assert f["verified"] == "git-blob-sha1"  # small text files are plain git blobs
    assert not (target / "IF-RL").exists()
    assert m["endpoint"] == hub.endpoint


def test_pinned_commit_and_layout_readable_by_loaders(hub, section):
    from recipe.hub.safe_load import load_dataset_config

    sha = hub.commits["nvidia/Nemotron-Cascade-2-SFT-Data"]
    m = download_artifact(section, "sft-data", subsets=["math", "safety"], revision=sha, progress=False)
    assert m["pinned"] and m["resolved_commit"] == sha
    target = Path(section.download_dir) / "nvidia" / "Nemotron-Cascade-2-SFT-Data"
    assert sorted(p.parent.name for p in target.glob("*/*.jsonl")) == ["math", "safety"]
    ds = load_dataset_config(target, "safety")
    assert len(ds) == 5 and ds[0]["messages"][-1]["role"] == "assistant"
    from recipe.data.loaders import hub_configs, load_released  # the data-curation loaders read the download
    assert sorted(hub_configs(target)) == ["math", "safety"]
    records = list(load_released(target, "safety"))
    assert len(records) == 5 and records[0]["messages"][-1]["role"] == "assistant"


def test_model_download_skips_pickle_and_code_by_default(hub, section, tmp_path):
    m = download_artifact(section, "released-model", subsets=["config", "weights"], progress=False)
    names = {f["path"] for f in m["files"]}
    assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"} <= names
    assert not names & {"pytorch_model.bin", "modeling_evil.py"}
    assert set(m["unsafe_files_skipped"]) == {"pytorch_model.bin", "modeling_evil.py"}
    assert {f["path"]: f["verified"] for f in m["files"]}["model.safetensors"] == "lfs-sha256"
    target = Path(section.download_dir) / "nvidia" / "Nemotron-Cascade-2-30B-A3B"
    assert not (target / "pytorch_model.bin").exists() and not (target / "modeling_evil.py").exists()
    assert not hub.evil_marker.exists()


def test_resume_after_dropped_connection_and_skip_finished(hub, section, tmp_path, monkeypatch):
    import huggingface_hub.constants

    # The client reads 10 MB chunks; with tiny test files it would get no whole chunk before the break.
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 64)
    target = tmp_path / "resume"
    first = download_artifact(section, "rl-data", subsets=["MOPD"], local_dir=target, progress=False)
    # The server breaks the connection halfway through IF-RL/train.jsonl on its first download.
    hub.set_flaky(["IF-RL/train.jsonl"])
    before = len(hub.requests_log())
    try:
        second = download_artifact(section, "rl-data", subsets=["MOPD", "IF-RL"], local_dir=target, progress=False)
    finally:
        hub.set_flaky([])
    new = hub.requests_log()[before:]
    gets = [r for r in new if r["method"] == "GET" and r["path"].endswith("/IF-RL/train.jsonl")]
    full = (target / "IF-RL" / "train.jsonl").read_bytes()
    assert len(gets) == 2 and gets[0]["range"] is None, gets
    resumed_at = int(gets[1]["range"].removeprefix("bytes=").rstrip("-"))  # resumed, not restarted
    assert 0 < resumed_at <= len(full) // 2 and gets[1]["status"] == 206
    got = {f["path"]: f for f in second["files"]}
    assert got["IF-RL/train.jsonl"]["sha256"] == hashlib.sha256(full).hexdigest()
    # Files finished by the first run are not fetched again.
    assert got["MOPD/train.jsonl"] == {f["path"]: f for f in first["files"]}["MOPD/train.jsonl"]
    assert not [r for r in new if r["method"] == "GET" and r["path"].endswith(("/MOPD/train.jsonl", "/README.md"))]


def test_missing_repo_gated_and_offline_errors(hub, section, tmp_path, monkeypatch):
    bad = section.model_copy(update={"rl_data": section.rl_data.model_copy(update={"repo_id": "nvidia/nope"})})
    with pytest.raises(HubError, match="nvidia/nope.*not found"):
        download_artifact(bad, "rl-data", progress=False)
    hub.set_gated(["nvidia/Nemotron-Cascade-2-SFT-Data"])
    try:
        with pytest.raises(HubError, match="gated.*hf auth login"):
            download_artifact(section, "sft-data", progress=False)
    finally:
        hub.set_gated([])
    with pytest.raises(HubError, match="revision 'no-such-branch' does not exist"):
        download_artifact(section, "rl-data", revision="no-such-branch", progress=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    with pytest.raises(HubUnreachableError, match=f"cannot reach.*{closed}"):
        download_artifact(section, "rl-data", local_dir=tmp_path / "x", progress=False)


def test_cli_honours_hf_endpoint(hub, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.endpoint, HF_HUB_DISABLE_XET="1", HF_HOME=str(tmp_path / "hf"))
    out = subprocess.run([*RECIPE, "hub", "download", "rl-data", "--subset", "IF-RL", "--revision", "main",
                          "--local-dir", str(tmp_path / "cli"), "--json"], cwd=PROJECT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["endpoint"] == hub.endpoint and (tmp_path / "cli" / "IF-RL" / "train.jsonl").exists()
    env["HF_ENDPOINT"] = "http://127.0.0.1:9"  # discard port: nothing listens
    out = subprocess.run([*RECIPE, "hub", "download", "rl-data",
                          "--local-dir", str(tmp_path / "cli2")], cwd=PROJECT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3 and "cannot reach" in out.stderr


def test_notebook_api_states_plainly_when_hub_unreachable(monkeypatch, tmp_path):
    from recipe.hub.hub_notebook_api import download_released, hub_status_line, summary_table

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    results = download_released("tiny", overrides=[f"hub.download_dir={tmp_path}"], progress=False)
    assert set(results) == {"released-model", "sft-data", "rl-data"} and not any(r["ok"] for r in results.values())
    line = hub_status_line(results)
    assert line.startswith("The Hugging Face Hub (http://127.0.0.1:9) cannot be reached") and "nothing was downloaded" in line
    assert list(summary_table(results)["downloaded"]) == [False, False, False]


def test_offline_mode_is_reported_not_hidden(monkeypatch, tmp_path):
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE is set"):
        download_artifact(load_config("tiny").hub, "rl-data", local_dir=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_altered_local_file_is_never_reported_as_good(hub, section, tmp_path):
    target = tmp_path / "alter"
    download_artifact(section, "rl-data", subsets=["MOPD"], local_dir=target, progress=False)
    f = target / "MOPD" / "train.jsonl"
    good = f.read_bytes()
    f.write_bytes(good.replace(b"MOPD", b"XXXX", 1))
    try:
        m = download_artifact(section, "rl-data", subsets=["MOPD"], local_dir=target, progress=False)
    except HubError as e:  # either the client re-fetches it, or the check against the Hub's listing refuses it
        assert "MOPD/train.jsonl" in str(e) and "differs from the Hub's" in str(e)
    else:
        assert f.read_bytes() == good
        assert {x["path"]: x["sha256"] for x in m["files"]}["MOPD/train.jsonl"] == hashlib.sha256(good).hexdigest()
