"""Point ``huggingface_hub`` at a loopback server inside a test (env + the constants it read at import)."""
from __future__ import annotations


def use_loopback_hub(monkeypatch, endpoint: str, tmp_home) -> None:
    import huggingface_hub.constants as c

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_home))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(c, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", False)
