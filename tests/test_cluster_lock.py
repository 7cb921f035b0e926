"""Container lock: digest resolution through each tool, refusal while unpinned, in-container fingerprint check."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from recipe.cluster import lock as L
from recipe.cluster import fingerprint_check

PROJECT = Path(__file__).resolve().parents[1]
LOCK = PROJECT / "containers" / "nemo-rl.lock.json"
DIGEST = "sha256:" + "ab" * 32


@pytest.fixture
def lock_copy(tmp_path):
    p = tmp_path / "lock.json"
    shutil.copy(LOCK, p)
    return p


def test_shipped_lock_is_valid_and_matches_release():
    lk = L.read_lock(LOCK)
    assert lk.image == "nvcr.io/nvidia/nemo-rl" and lk.tag == "v0.7.0"
    assert lk.nemo_rl.git_tag == "v0.7.0" and lk.nemo_rl.commit.startswith("81aa43dd")
    assert set(lk.nemo_rl.submodules) == set(L.SUBMODULES)
    assert {"torch", "vllm", "transformers"} <= set(lk.versions)


def test_digest_via_skopeo_and_docker_outputs():
    calls = []

    def run(cmd):
        calls.append(cmd)
        if cmd[0] == "skopeo":
            raise subprocess.CalledProcessError(1, cmd, stderr="registry unreachable")
        return f"Name: nvcr.io/nvidia/nemo-rl:v0.7.0\nMediaType: application/vnd.oci.image.index.v1+json\nDigest:    {DIGEST}\n"

    digest, tool = L.resolve_digest("nvcr.io/nvidia/nemo-rl", "v0.7.0", run=run,
                                    which=lambda t: f"/usr/bin/{t}" if t in ("skopeo", "docker") else None)
    assert (digest, tool) == (DIGEST, "docker")
    assert calls[0][:2] == ["skopeo", "inspect"] and calls[1][:3] == ["docker", "buildx", "imagetools"]


def test_digest_errors_name_every_tool():
    with pytest.raises(RuntimeError, match="none of skopeo, docker, enroot"):
        L.resolve_digest("nvcr.io/nvidia/nemo-rl", "v0.7.0", which=lambda t: None)
    with pytest.raises(RuntimeError, match="skopeo: no sha256 digest"):
        L.resolve_digest("nvcr.io/nvidia/nemo-rl", "v0.7.0", tool="skopeo", run=lambda c: "garbage")


def test_update_lock_and_refusal(lock_copy):
    lk = L.read_lock(lock_copy)
    with pytest.raises(L.UnpinnedError, match="--allow-unpinned"):
        L.require_pinned(lk, lock_copy, allow_unpinned=False)
    assert "UNPINNED" in L.require_pinned(lk, lock_copy, allow_unpinned=True)[0]
    new = L.update_lock(lock_copy, digest=DIGEST, tool="skopeo", fingerprint="fp123\n")
    assert new.pinned and new.resolved_by == "skopeo" and new.container_fingerprint == "fp123"
    assert L.require_pinned(L.read_lock(lock_copy), lock_copy, allow_unpinned=False) == []
    assert new.pyxis_ref == f"nvcr.io#nvidia/nemo-rl@{DIGEST}"
    with pytest.raises(ValidationError, match=r"digest[\s\S]*String should match pattern"):
        L.update_lock(lock_copy, digest="sha256:short")


def test_submodule_shas_refuse_wrong_checkout():
    with pytest.raises(RuntimeError, match="not v0.7.0"):
        L.submodule_shas(Path("/x"), run=lambda c: "0" * 40 + "\n")


def test_fingerprint_check_script(lock_copy, tmp_path):
    fp_file = tmp_path / "nemo_rl_container_fingerprint"
    fp_file.write_text("fp-image\n")
    script = Path(fingerprint_check.__file__)

    def run(*extra):  # -I: isolated mode, proves the script needs nothing but the standard library
        return subprocess.run([sys.executable, "-I", str(script), "--lock", str(lock_copy),
                               "--fingerprint-file", str(fp_file), *extra], capture_output=True, text=True)

    p = run()
    assert p.returncode == 3 and "records no container fingerprint" in p.stderr
    assert run("--allow-unpinned").returncode == 0
    L.update_lock(lock_copy, fingerprint="fp-lock")
    p = run()
    assert p.returncode == 2 and "'fp-image'" in p.stderr and "'fp-lock'" in p.stderr   # names both
    L.update_lock(lock_copy, fingerprint="fp-image")
    assert run().returncode == 0
    fp_file.unlink()
    assert run().returncode == 4


def test_container_files_consistent():
    from recipe.cluster.gym import prefetch_text

    assert (PROJECT / "containers" / "gym_envs.yaml").read_text() == prefetch_text(), \
        "regenerate with: python -m recipe.cluster.gym"
    docker = (PROJECT / "containers" / "Dockerfile").read_text()
    assert "FROM nvcr.io/nvidia/nemo-rl:${NEMO_RL_TAG}@${NEMO_RL_DIGEST}" in docker
    assert "prefetch_venvs.py /opt/recipe/containers/gym_envs.yaml" in docker
    sc = Path(sys.executable).parent / "shellcheck"
    p = subprocess.run([str(sc), str(PROJECT / "containers" / "build.sh")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout


def test_cli_lock_with_fake_skopeo(lock_copy, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from recipe.cli.cluster_cmd import app

    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "skopeo").write_text(f"#!/usr/bin/env bash\necho '{DIGEST}'\n")
    (bindir / "skopeo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{__import__('os').environ['PATH']}")
    r = CliRunner().invoke(app, ["lock", "--tool", "skopeo", "--lock-file", str(lock_copy), "--fingerprint", "fp9"])
    assert r.exit_code == 0, r.output
    lk = L.read_lock(lock_copy)
    assert lk.digest == DIGEST and lk.resolved_by == "skopeo" and lk.container_fingerprint == "fp9"


def test_released_model_pinned_to_a_commit_and_marked_unverified(tmp_path):
    """The paper profile pins the released model to a commit (not `main`); the commit comes from a
    public record, not from the Hub, so hub.yaml, the lock and every render's provenance say it is unverified."""
    import json

    from recipe.cluster.render import render_stage
    from recipe.config import load_config
    from recipe.runs.layout import RunDir

    dl = Path(__file__).parent / "fixtures/cluster/hub_downloads"
    cfg = load_config("paper", overrides=["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf", f"hub.download_dir={dl}"])
    art = cfg.hub.released_model
    assert art.pinned and art.revision != "main" and art.revision_verified is False and art.revision_source
    lock = L.read_lock(Path(__file__).parents[1] / "containers/nemo-rl.lock.json")
    assert lock.released_model.repo_id == art.repo_id and lock.released_model.revision == art.revision
    assert lock.released_model.verified is False
    res = render_stage(cfg, RunDir(tmp_path / "r"), "sft", allow_unpinned=True, allow_dirty=True)
    prov = json.loads(res.provenance_path.read_text())
    assert prov["released_model"] == {**lock.released_model.model_dump(), "verified": False}
    # a branch name is not a pin
    assert not load_config("paper", overrides=["hub.released_model.revision=main"]).hub.released_model.pinned
