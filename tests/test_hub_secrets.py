"""Tokens never reach a file: a tiny run (`recipe run`, shrunk to SFT with a few steps), a
publish of its stage, a download and the download notebook run with a fake token in the environment against
the loopback Hub; every file they produce (run dir with its papermill notebooks, downloads, the executed
download notebook -- papermill writes parameters into it --, the published files fetched back) and the
commands' logs are scanned for the token. The server's request log proves the token was really sent.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub_server.fixtures import HubServer
from hub_server.tiny import seed_released

PROJECT = Path(__file__).resolve().parents[1]
RECIPE = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()"]
FAKE_TOKEN = "hf_FakeTokenForLeakTest" + "Q7zK2" * 4


def _scan(root: Path) -> list[str]:
    hits = []
    needle = FAKE_TOKEN.encode()
    for p in root.rglob("*"):
        if p.is_file() and needle in p.read_bytes():
            hits.append(str(p))
    return hits


@pytest.mark.slow
def test_fake_token_never_written(tmp_path, monkeypatch):
    import papermill
    from huggingface_hub import snapshot_download

    srv_root = tmp_path / "server"
    hub = HubServer.start(srv_root)
    try:
        seed_released(hub, srv_root, srv_root / "EVIL_RAN")
        work = tmp_path / "work"
        work.mkdir()
        for k in [k for k in os.environ if k.startswith("HF_")]:
            monkeypatch.delenv(k)
        monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
        monkeypatch.setenv("HF_HOME", str(work / "hf_home"))
        monkeypatch.setenv("RECIPE_RUNS_DIR", str(work / "runs"))
        logs = []
        tiny = ["run", "--profile", "tiny", "--run-id", "secret-run", "--until", "sft"] + [
            x for kv in ("run.torch_threads=1", "sft.steps=3", "sft.warmup_steps=1", "sft.save_every=3",
                         "sft.log_every=1",
                         "domains.tiny.train_items=40", "domains.tiny.val_items=4", "evaluation.max_new_tokens=8",
                         "model.tokenizer.corpus_examples=80", "domains.tiny.selection_items=4",
                         "domains.tiny.train_items_per_domain={long_context: 20, code: 20, swe: 20, swe_agentic: 20}",
                         "domains.tiny.val_items_per_domain={long_context: 2, code: 2, swe: 2, swe_agentic: 2}",
                         "domains.tiny.long_context_filler=20") for x in ("--set", kv)]
        for args in (tiny, ["hub", "publish", "--run-id", "secret-run", "--stage", "sft", "--repo", "me/secret-run"],
                     ["hub", "download", "rl-data", "--subset", "IF-RL", "--set", "hub.rl_data.revision=main"]):
            out = subprocess.run([*RECIPE, *args], cwd=work, capture_output=True, text=True, timeout=900)
            assert out.returncode == 0, out.stderr
            logs += [out.stdout, out.stderr]
        papermill.execute_notebook(str(PROJECT / "notebooks" / "05_hub_download.ipynb"), str(work / "05_out.ipynb"),
                                   parameters={"profile": "tiny", "rows_per_config": 2,
                                               # the fake releases have no commit matching the data.yaml pins
                                               "overrides": ["hub.sft_data.revision=main", "hub.rl_data.revision=main"]}, cwd=str(work),
                                   kernel_name="python3", progress_bar=False)
        snapshot_download("me/secret-run", revision="sft", local_dir=work / "published", endpoint=hub.endpoint,
                          token=FAKE_TOKEN)
    finally:
        hub.stop()

    nb_text = (work / "05_out.ipynb").read_text()
    assert "All 3 artifacts downloaded" in nb_text, nb_text[-3000:]
    assert (work / "downloads" / "nvidia" / "Nemotron-Cascade-2-RL-data" / "IF-RL" / "train.jsonl").exists()
    assert (work / "published" / "model.safetensors").exists()
    assert (work / "runs" / "secret-run" / "01_sft" / "publish.json").exists()
    assert (work / "runs" / "secret-run" / "01_sft" / "notebook.ipynb").exists()  # papermill output of the run
    creates = [r for r in hub.requests_log() if r["path"].startswith("/api/repos/create")]
    assert creates and all(r["auth"] for r in creates)
    (work / "canary.txt").write_text(f"token={FAKE_TOKEN}")  # the scan itself can find a leak
    assert _scan(work) == [str(work / "canary.txt")]
    (work / "canary.txt").unlink()
    assert _scan(work) == []
    assert not any(FAKE_TOKEN in text for text in logs)
