"""Downloaded artifacts never run repository code or unpickle by default.

The "released" repo served here contains a pickle (``pytorch_model.bin``) and a Python file that both
create a marker file when executed; the tests assert the marker never appears unless the user opts in.
"""
from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from hub_server.env import use_loopback_hub
from hub_server.fixtures import HubServer
from hub_server.tiny import _Evil, build_tiny_checkpoint, seed_released
from recipe.config import load_config
from recipe.hub.download import download_artifact
from recipe.hub.hub_errors import UntrustedArtifactError
from recipe.hub.safe_load import check_model_folder, load_model


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return build_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "m")


def _copy(ckpt: Path, dst: Path) -> Path:
    shutil.copytree(ckpt, dst)
    return dst


def test_pickle_only_weights_are_refused(ckpt, tmp_path):
    marker = tmp_path / "EVIL_RAN"
    folder = _copy(ckpt, tmp_path / "m")
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Evil(str(marker))))
    with pytest.raises(UntrustedArtifactError, match="only as pickle"):
        load_model(folder)
    assert not marker.exists()


def test_safetensors_preferred_over_a_stray_pickle(ckpt, tmp_path):
    marker = tmp_path / "EVIL_RAN"
    folder = _copy(ckpt, tmp_path / "m")
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Evil(str(marker))))
    model = load_model(folder)
    from safetensors.torch import load_file

    ref = load_file(folder / "model.safetensors")
    emb = model.get_input_embeddings().weight.detach()
    assert any(t.shape == emb.shape and t.equal(emb) for t in ref.values())  # weights came from safetensors
    assert not marker.exists()


def test_repository_code_is_refused_unless_trusted(ckpt, tmp_path):
    marker = tmp_path / "EVIL_RAN"
    folder = _copy(ckpt, tmp_path / "m")
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(model_type="evil_model", auto_map={"AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"})
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "modeling_evil.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    with pytest.raises(UntrustedArtifactError, match="trust_remote_code=True"):
        load_model(folder)
    assert not marker.exists()
    # Opting in lifts our check (transformers would then import the code: not done here).
    assert check_model_folder(folder, trust_remote_code=True)["code"] == ["modeling_evil.py"]


def test_download_excludes_unsafe_files_unless_opted_in(tmp_path_factory, monkeypatch, tmp_path):
    root = tmp_path_factory.mktemp("hubsrv")
    hub = HubServer.start(root / "srv")
    try:
        marker = root / "EVIL_RAN"
        seed_released(hub, root, marker)
        use_loopback_hub(monkeypatch, hub.endpoint, tmp_path / "hf_home")
        section = load_config("tiny").hub
        safe = download_artifact(section, "released-model", subsets=["config", "weights"],
                                 local_dir=tmp_path / "safe", progress=False)
        assert not (tmp_path / "safe" / "pytorch_model.bin").exists()
        assert load_model(tmp_path / "safe").config.vocab_size > 0
        opted = download_artifact(section, "released-model", subsets=["config", "weights"],
                                  local_dir=tmp_path / "all", allow_unsafe=True, progress=False)
        assert (tmp_path / "all" / "pytorch_model.bin").exists() and (tmp_path / "all" / "modeling_evil.py").exists()
        assert opted["unsafe_files_skipped"] == [] and safe["unsafe_files_skipped"]
        load_model(tmp_path / "all")  # still reads safetensors only, imports no code
        assert not marker.exists()
    finally:
        hub.stop()
