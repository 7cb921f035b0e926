"""Provenance: dirty git trees are refused unless allowed, the code snapshot is the commit, CLI and notebook API."""
from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

from recipe.cluster import cluster_notebook_api, provenance
from recipe.cli.cluster_cmd import app

PROJECT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "recipe").mkdir(parents=True)
    (r / "recipe" / "a.py").write_text("A = 1\n")
    _git(r, "init", "-q")
    _git(r, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    _git(r, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return r


def test_clean_tree_snapshot_is_the_commit(repo, tmp_path):
    st = provenance.git_state(repo)
    assert st["commit"] and not st["dirty"]
    assert provenance.check_clean(st, allow_dirty=False, root=repo) == []
    (repo / "recipe" / "a.py").write_text("A = 2\n")           # edit after the state was taken
    snap = provenance.snapshot_code(tmp_path / "snap", state=st, root=repo)
    assert (snap / "recipe" / "a.py").read_text() == "A = 1\n"  # git archive of HEAD


def test_dirty_tree_refused_unless_allowed(repo, tmp_path):
    (repo / "recipe" / "a.py").write_text("A = 2\n")
    (repo / "new.py").write_text("x\n")
    st = provenance.git_state(repo)
    assert st["dirty"] and "recipe/a.py" in st["changed"]
    with pytest.raises(provenance.DirtyTreeError, match="--allow-dirty"):
        provenance.check_clean(st, allow_dirty=False, root=repo)
    assert "DIRTY TREE" in provenance.check_clean(st, allow_dirty=True, root=repo)[0]
    snap = provenance.snapshot_code(tmp_path / "snap", state=st, root=repo)
    assert (snap / "recipe" / "a.py").read_text() == "A = 2\n" and (snap / "new.py").is_file()


def test_not_a_repo_is_dirty(tmp_path):
    st = provenance.git_state(tmp_path)
    assert st["commit"] is None and st["dirty"]


def test_data_revisions(tmp_path):
    (tmp_path / "train.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "source.json").write_text(json.dumps({"dataset": "nvidia/Nemotron-Cascade-2-RL-data", "revision": "abc"}))
    d = provenance.data_revisions(tmp_path)
    assert d["train"]["exists"] and len(d["train"]["sha256"]) == 64
    assert d["validation"] == {"path": str(tmp_path / "validation.jsonl"), "exists": False, "sha256": None}
    assert d["source"]["revision"] == "abc"


def test_cli_render_submit_status(tmp_path, monkeypatch, shared_dir):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("RECIPE_NEMO_RL_DIR", str(shared_dir / "fixtures/nemo_rl_configs/v0.7.0"))
    cli = CliRunner()
    r = cli.invoke(app, ["render", "--stage", "if_rl", "--run-id", "c1", "--profile", "paper"])
    assert r.exit_code == 2 and "cluster.account and cluster.partition not set" in r.output   # no placeholder
    slurm = ["-s", "cluster.account=acct", "-s", "cluster.partition=batch", "-s", "cluster.hf_home=/shared/hf"]
    r = cli.invoke(app, ["render", "--stage", "if_rl", "--run-id", "c1", "--profile", "paper", *slurm])
    from recipe.cluster.lock import read_lock
    if not read_lock(PROJECT / "containers/nemo-rl.lock.json").pinned:
        assert r.exit_code == 2 and "not pinned" in r.output                  # refuses by default
    r = cli.invoke(app, ["render", "--stage", "if_rl", "--run-id", "c1", "--profile", "paper", *slurm,
                         "--allow-unpinned", "--allow-dirty", "--diff", "--check"])
    assert r.exit_code == 0, r.output
    assert "grpo.use_dynamic_sampling: False -> True" in r.output
    assert "if_rl: valid against" in r.output
    r = cli.invoke(app, ["submit", "--stage", "if_rl", "--run-id", "c1", "--profile", "paper", *slurm,
                         "--allow-unpinned", "--allow-dirty"])
    assert r.exit_code == 0 and "dry run (add --submit)" in r.output
    r = cli.invoke(app, ["status", "--run-id", "c1"])
    assert r.exit_code == 0 and "if_rl: pending" in r.output


def test_notebook_api(tmp_path, monkeypatch, shared_dir):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    res = cluster_notebook_api.render_stage("nb", "code_rl", profile="paper", allow_unpinned=True, allow_dirty=True,
                                    overrides=("cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"))
    assert res.files and all(f.is_file() for f in res.files)
    diff = cluster_notebook_api.config_diff(res, release_dir=shared_dir / "fixtures/nemo_rl_configs/v0.7.0")
    assert "policy.generation.top_p: 1.0 -> 0.95" in diff
    assert cluster_notebook_api.submit(res, submit=False) == [f"bash {res.jobs[0].launch_path}"]
    assert cluster_notebook_api.monitor("nb", "code_rl")["status"] == "pending"


def test_render_out_dir_is_mounted(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    out = tmp_path / "elsewhere"
    res = cluster_notebook_api.render_stage("o1", "if_rl", profile="paper", allow_unpinned=True, allow_dirty=True, out=out,
                                    overrides=("cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"))
    assert res.out_dir == out.resolve() and (out / "if_rl.yaml").is_file() and (out / "code").is_dir()
    mounts = [ln for ln in (out / "if_rl.launch.sh").read_text().splitlines() if ln.startswith("export MOUNTS=")][0]
    assert f"{out.resolve()}:{out.resolve()}" in mounts and f"{tmp_path / 'runs'}:{tmp_path / 'runs'}" in mounts
