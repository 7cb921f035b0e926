"""`recipe hub publish` round trip on a loopback Hub: real create_repo / create_branch / LFS upload / commit.

A tiny checkpoint is built here (2-layer Llama, tokenizer trained in-process), laid out as a run with
``RunDir``, published to branch ``sft``, downloaded back and compared file by file and by logits.
Also: idempotent re-publish, --force for different content, --dry-run writes nothing, model card with
model-index and lineage, dataset publishing with a data card, refusal of incomplete/unsafe checkpoints.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from hub_server.env import use_loopback_hub
from hub_server.fixtures import HubServer
from hub_server.tiny import FIXED_INPUT, make_fake_run
from recipe.hub.hub_errors import HubError, UntrustedArtifactError
from recipe.hub.publish import publish_dataset, publish_stage
from recipe.runs import RunDir


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    server = HubServer.start(tmp_path_factory.mktemp("hubsrv") / "srv")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def run_template(tmp_path_factory):
    return make_fake_run(tmp_path_factory.mktemp("runs"), "r1", stages=("sft", "if_rl"))


@pytest.fixture()
def run(run_template, tmp_path):
    """A private copy of the run per test: publishing records publish.json in it and tests edit checkpoints."""
    return RunDir(shutil.copytree(run_template.path, tmp_path / "runs" / run_template.path.name))


@pytest.fixture()
def repo(request):
    """A model repository of its own per test on the shared server: no test depends on another's pushes."""
    return "me/" + re.sub(r"[^A-Za-z0-9-]", "-", request.node.name)[:90]


@pytest.fixture()
def env(hub, monkeypatch, tmp_path):
    use_loopback_hub(monkeypatch, hub.endpoint, tmp_path / "hf_home")


def _writes(log: list[dict]) -> list[dict]:
    return [r for r in log if r["method"] in ("POST", "PUT") and "paths-info" not in r["path"]]


def test_dry_run_writes_nothing(hub, run, env, repo):
    before = len(hub.requests_log())
    res = publish_stage(run, "sft", repo, dry_run=True)
    assert res["action"] == "dry-run" and res["remote_state"] == "no-repo" and res["branch"] == "sft"
    paths = {f["path"] for f in res["files"]}
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "README.md",
            "provenance.json", "validation.json", "config.yaml"} <= paths
    assert not _writes(hub.requests_log()[before:])
    assert not (run.stage_dir("sft") / "publish.json").exists()


def test_round_trip_identical_files_and_logits(hub, run, env, repo, tmp_path):
    import torch
    from huggingface_hub import HfApi, snapshot_download

    from recipe.hub.safe_load import load_model, load_tokenizer

    res = publish_stage(run, "sft", repo)
    assert res["action"] == "created"
    assert (hub.root / "models" / repo / ".git" / "hub-private").exists()  # created private by default
    api = HfApi(endpoint=hub.endpoint)
    branches = {b.name: b.target_commit for b in api.list_repo_refs(repo).branches}
    assert branches["sft"] == res["commit"]
    tree = {f.path: f for f in api.list_repo_tree(repo, revision="sft", recursive=True)}
    assert tree["model.safetensors"].lfs is not None  # went through the LFS batch + PUT path
    record = json.loads((run.stage_dir("sft") / "publish.json").read_text())
    assert record["commit"] == res["commit"] and record["branch"] == "sft"

    local = Path(snapshot_download(repo, revision="sft", local_dir=tmp_path / "dl", endpoint=hub.endpoint))
    ckpt = run.checkpoint_dir("sft")
    for f in ckpt.rglob("*"):
        if f.is_file():
            assert (local / f.relative_to(ckpt)).read_bytes() == f.read_bytes(), f.name

    ref_model, ref_tok = load_model(ckpt), load_tokenizer(ckpt)
    model, tok = load_model(local), load_tokenizer(local)
    ids = tok(FIXED_INPUT, return_tensors="pt").input_ids
    assert torch.equal(ids, ref_tok(FIXED_INPUT, return_tensors="pt").input_ids)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, ref_model(ids).logits)
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == \
        ref_tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    # the project's validation (same verifiers as training) scores both copies alike
    from recipe.config import load_config
    from recipe.validation.domain_validation import validate_domains

    from hub_server.tiny import tiny_val_splits
    tok.padding_side = ref_tok.padding_side = "left"  # generation pads on the left (as load_checkpoint sets)
    cfg = load_config("tiny")
    splits, ecfg = tiny_val_splits(cfg, n=4), cfg.evaluation.model_copy(update={"max_new_tokens": 8})
    assert validate_domains(model, tok, splits, cfg.domains.names, ecfg) == \
        validate_domains(ref_model, ref_tok, splits, cfg.domains.names, ecfg)


def test_model_card_has_model_index_and_lineage(hub, run, env, repo, tmp_path):
    from huggingface_hub import ModelCard, hf_hub_download

    publish_stage(run, "sft", repo)
    card = ModelCard.load(hf_hub_download(repo, "README.md", revision="sft", endpoint=hub.endpoint,
                                          local_dir=tmp_path))
    data = card.data
    assert data.base_model is None and data.library_name == "transformers"  # tiny runs start from scratch
    assert "built from scratch" in card.text
    assert data.datasets == ["nvidia/Nemotron-Cascade-2-RL-data"]
    results = {r.dataset_name: r.metric_value for r in data.eval_results}
    assert results == {"math (validation)": 0.25, "mcqa (validation)": 0.5}
    info = json.loads(run.run_json_path.read_text())
    for needle in (info["git_commit"], info["container_digest"], "`sft` | done", "1" * 40):
        assert needle in card.text, needle


def test_republish_is_noop_and_different_content_needs_force(hub, run, env, repo):
    first = publish_stage(run, "sft", repo)
    before = len(hub.requests_log())
    again = publish_stage(run, "sft", repo)
    assert again["action"] == "unchanged" and again["commit"] == first["commit"]
    assert not _writes(hub.requests_log()[before:])

    # if_rl's checkpoint (different weights) pushed to the *sft* branch: refused, then forced.
    other = run.checkpoint_dir("if_rl")
    sft_ckpt = run.checkpoint_dir("sft")
    saved = (sft_ckpt / "model.safetensors").read_bytes()
    (sft_ckpt / "model.safetensors").write_bytes((other / "model.safetensors").read_bytes())
    (sft_ckpt / "extra_note.json").write_text("{}")
    try:
        with pytest.raises(HubError, match="different content.*--force"):
            publish_stage(run, "sft", repo)
        forced = publish_stage(run, "sft", repo, force=True)
        assert forced["action"] == "replaced" and forced["commit"] != first["commit"]
        assert set(forced["changed"]) == {"model.safetensors", "extra_note.json"}
    finally:
        (sft_ckpt / "model.safetensors").write_bytes(saved)
        (sft_ckpt / "extra_note.json").unlink()
    restored = publish_stage(run, "sft", repo, force=True)
    assert restored["removed"] == ["extra_note.json"]  # files gone locally are deleted on the branch


def test_each_stage_gets_its_branch(hub, run, env, repo):
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.endpoint)
    assert publish_stage(run, "sft", repo)["action"] == "created"
    api.upload_file(path_or_fileobj=b"notes on main\n", path_in_repo="NOTES.md", repo_id=repo)  # main != stages
    res = publish_stage(run, "if_rl", repo)
    assert res["action"] == "created" and res["removed"] == ["NOTES.md"]  # not inherited from main
    branches = {b.name for b in api.list_repo_refs(repo).branches}
    assert {"main", "sft", "if_rl"} <= branches
    assert "NOTES.md" not in {f.path for f in api.list_repo_tree(repo, revision="if_rl")}
    assert publish_stage(run, "if_rl", repo)["action"] == "unchanged"


def test_branch_moved_since_comparison_is_refused(hub, run, env, repo, monkeypatch):
    from huggingface_hub import HfApi

    import recipe.hub.publish as pub

    publish_stage(run, "sft", repo)
    real_compare = pub.compare_remote

    def compare_then_someone_pushes(api, plan):
        real_compare(api, plan)
        api.upload_file(path_or_fileobj=b"x\n", path_in_repo="race.txt", repo_id=repo, revision="sft")

    monkeypatch.setattr(pub, "compare_remote", compare_then_someone_pushes)
    ckpt = run.checkpoint_dir("sft")
    (ckpt / "extra_note.json").write_text("{}")
    try:
        with pytest.raises(HubError, match="moved while this command ran"):
            publish_stage(run, "sft", repo, force=True)
    finally:
        (ckpt / "extra_note.json").unlink()
    monkeypatch.setattr(pub, "compare_remote", real_compare)
    assert "race.txt" in {f.path for f in HfApi(endpoint=hub.endpoint).list_repo_tree(repo, revision="sft")}
    assert publish_stage(run, "sft", repo, force=True)["removed"] == ["race.txt"]


def test_refuses_incomplete_unsafe_or_unfinished(run, env, tmp_path, repo):
    ckpt = run.checkpoint_dir("sft")
    (ckpt / "pytorch_model.bin").write_bytes(b"not really a pickle")
    try:
        with pytest.raises(UntrustedArtifactError, match="pytorch_model.bin"):
            publish_stage(run, "sft", repo, dry_run=True)
    finally:
        (ckpt / "pytorch_model.bin").unlink()
    gen = (ckpt / "generation_config.json").read_bytes()
    (ckpt / "generation_config.json").unlink()
    try:
        with pytest.raises(HubError, match="missing generation_config.json"):
            publish_stage(run, "sft", repo, dry_run=True)
    finally:
        (ckpt / "generation_config.json").write_bytes(gen)
    manifest = run.read_manifest("if_rl")
    run.write_manifest("if_rl", {**manifest, "status": "running"})
    try:
        with pytest.raises(HubError, match="'running', not 'done'"):
            publish_stage(run, "if_rl", repo, dry_run=True)
    finally:
        run.write_manifest("if_rl", manifest)


def test_dataset_with_data_card_loads_back(hub, env, tmp_path):
    from datasets import load_dataset
    from huggingface_hub import snapshot_download

    data = tmp_path / "curated"
    (data / "math").mkdir(parents=True)
    rows = [{"id": f"m{i}", "domain": "math", "messages": [{"role": "user", "content": f"{i}+1"}]} for i in range(3)]
    (data / "math" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (data / "report.json").write_text(json.dumps({"rows_in": 3, "kept": 3}))
    (data / "quarantine.jsonl").write_text('{"id": "bad"}\n')  # rejected rows: never published
    cards = tmp_path / "data_cards"
    cards.mkdir()
    (cards / "curated.md").write_text("---\nlicense: odc-by\n---\n# curated math (test)\n")
    res = publish_dataset(data, "me/cascade-data", cards_dir=cards)
    assert res["action"] == "created"
    assert {f["path"] for f in res["files"]} == {"README.md", "report.json", "math/train.jsonl"}
    assert publish_dataset(data, "me/cascade-data", cards_dir=cards)["action"] == "unchanged"
    local = Path(snapshot_download("me/cascade-data", repo_type="dataset", local_dir=tmp_path / "dl",
                                   endpoint=hub.endpoint))
    assert "config_name: math" in (local / "README.md").read_text()
    ds = load_dataset(str(local), "math", split="train")
    assert ds["id"] == ["m0", "m1", "m2"]


def test_cli_dry_run_lists_files_and_destination(hub, run, tmp_path):
    import os
    import subprocess
    import sys

    data = tmp_path / "curated"
    data.mkdir()
    (data / "mcqa.jsonl").write_text('{"id": "q1"}\n')
    (data / "README.md").write_text("---\nlicense: odc-by\n---\n# card\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.endpoint, HF_HUB_DISABLE_XET="1", HF_HOME=str(tmp_path / "hf"),
               RECIPE_RUNS_DIR=str(run.path.parent), COLUMNS="200")
    cmd = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()",
           "hub", "publish", "--run-id", run.run_id, "--stage", "if_rl", "--repo", "me/cli-run", "--dry-run",
           "--data-dir", str(data)]
    before = len(hub.requests_log())
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"{hub.endpoint}/me/cli-run @ branch if_rl" in out.stderr and "model.safetensors" in out.stderr
    assert f"{hub.endpoint}/datasets/me/cli-run-data @ branch main" in out.stderr and "mcqa.jsonl" in out.stderr
    assert not _writes(hub.requests_log()[before:])
    out = subprocess.run([*cmd[:-3], "--stage", "all", "--dry-run", "--json"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert [(r["branch"], r["action"]) for r in json.loads(out.stdout)] == [("sft", "dry-run"), ("if_rl", "dry-run")]
    out = subprocess.run([*cmd[:-3], "--stage", "rlhf"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no manifest for stage 'rlhf'" in out.stderr


def test_curated_output_of_recipe_data_round_trips(hub, env, tmp_path):
    """`recipe data curate --out DIR` output (its own card) -> publish -> download -> the data loaders read it."""
    from huggingface_hub import snapshot_download

    from recipe.config import load_config
    from recipe.data.curate import curate
    from recipe.data.loaders import hub_configs
    rows = [{"messages": [{"role": "user", "content": f"What is {i} plus {i + 1}? Explain briefly please."},
                          {"role": "assistant", "content": f"<think>add</think>The answer is {2 * i + 1}."}]}
            for i in range(20)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "curated-math"
    curate([tmp_path / "in.jsonl"], out, fmt="messages", decontaminate_against=[], config=load_config("tiny").data,
           backend=None, progress=False)
    res = publish_dataset(out, "me/curated-math", cards_dir=tmp_path / "no_cards")
    assert res["action"] == "created" and "README.md" in {f["path"] for f in res["files"]}
    local = Path(snapshot_download("me/curated-math", repo_type="dataset", local_dir=tmp_path / "dl",
                                   endpoint=hub.endpoint))
    for f in res["files"]:
        if f["path"] != "README.md":
            assert (local / f["path"]).read_bytes() == (out / f["path"]).read_bytes()
    from recipe.hub.publish import _split_card

    assert _split_card((local / "README.md").read_text()) == _split_card((out / "README.md").read_text())
    configs = hub_configs(local)
    assert configs and all(Path(p).exists() for files in configs.values() for p in files)


def test_dry_run_without_any_server_lists_files_and_says_remote_unknown(run, tmp_path):
    """No Hub reachable (a closed loopback port, as on an offline login node): --dry-run still lists
    what would be uploaded, exits 0 and says the remote state is unknown; a real publish refuses."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:              # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HUB_DISABLE_XET="1", HF_HOME=str(tmp_path / "hf"),
               RECIPE_RUNS_DIR=str(run.path.parent), COLUMNS="200", HF_HUB_ETAG_TIMEOUT="2", HF_HUB_DOWNLOAD_TIMEOUT="2")
    cmd = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()",
           "hub", "publish", "--run-id", run.run_id, "--stage", "sft", "--repo", "me/offline"]
    out = subprocess.run([*cmd, "--dry-run", "--json"], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    (res,) = json.loads(out.stdout)
    assert res["action"] == "dry-run" and res["remote_state"] == "unknown"
    assert res["note"].startswith("remote state unknown")
    assert "model.safetensors" in json.dumps(res) and "README.md" in json.dumps(res)
    out = subprocess.run([*cmd, "--dry-run"], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0 and "remote: unknown" in out.stderr, out.stderr
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode != 0 and "reach" in (out.stderr + out.stdout).lower()
