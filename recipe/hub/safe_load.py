"""Load downloaded artifacts without executing repository code or unpickling.

Rules, checked before ``transformers`` is called:

- weights must be safetensors: a folder whose weights exist only as pickle (``*.bin``, ``*.pt`` ...) is
  refused unless ``allow_pickle=True``; ``use_safetensors=True`` is always passed otherwise, so a stray
  ``pytorch_model.bin`` next to safetensors is never read;
- ``trust_remote_code`` is ``False`` unless the caller passes ``True``: a config whose ``model_type`` is not
  built into ``transformers`` and that points at repository code (``auto_map``) is refused with a message
  that names the option; code files in the folder are never imported;
- datasets are read as data files (``json``/``parquet`` builders), never through a loading script.

Not covered: malicious tensors (shape/dtype bombs) inside safetensors, tokenizer files with hostile
regexes, and anything loaded by other libraries.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe.hub.hub_errors import UntrustedArtifactError

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
CODE_SUFFIXES = (".py", ".pyc", ".so")


def inspect_folder(path: Path) -> dict[str, list[str]]:
    """Lists the safetensors, pickle and code files in a model folder (top level and subfolders)."""
    path = Path(path)
    files = [p for p in path.rglob("*") if p.is_file() and ".cache" not in p.relative_to(path).parts]
    rel = lambda ps: sorted(str(p.relative_to(path)) for p in ps)  # noqa: E731
    return {"safetensors": rel(p for p in files if p.suffix == ".safetensors"),
            "pickle": rel(p for p in files if p.suffix in PICKLE_SUFFIXES),
            "code": rel(p for p in files if p.suffix in CODE_SUFFIXES)}


def check_model_folder(path: Path, *, trust_remote_code: bool = False, allow_pickle: bool = False) -> dict:
    """Raise :class:`UntrustedArtifactError` when loading ``path`` would need pickle or repository code."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise UntrustedArtifactError(f"{path}: no config.json; is this a downloaded model folder?")
    found = inspect_folder(path)
    if not found["safetensors"] and found["pickle"] and not allow_pickle:
        raise UntrustedArtifactError(
            f"{path}: weights exist only as pickle ({', '.join(found['pickle'])}); unpickling can run "
            "arbitrary code, so it is refused. Use a safetensors revision of the model, or convert it in a "
            "trusted sandbox; pass allow_pickle=True only for files you trust.")
    if not found["safetensors"] and not found["pickle"]:
        raise UntrustedArtifactError(f"{path}: no *.safetensors weights found (download the `weights` subset)")
    config = json.loads((path / "config.json").read_text())
    if not trust_remote_code and config.get("auto_map") and not _builtin_model_type(config.get("model_type")):
        raise UntrustedArtifactError(
            f"{path}: model_type {config.get('model_type')!r} is not built into transformers and the config "
            f"asks for repository code (auto_map: {sorted(config['auto_map'])}). Repository code is not run "
            "by default; pass trust_remote_code=True (config: model.trust_remote_code: true) only if you have "
            "read that code.")
    return found


def _builtin_model_type(model_type: str | None) -> bool:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return bool(model_type) and model_type in CONFIG_MAPPING_NAMES


def load_model(path: Path | str, *, trust_remote_code: bool = False, allow_pickle: bool = False,
               **kwargs: Any):
    """``AutoModelForCausalLM.from_pretrained`` on a local folder, safetensors only, no repository code."""
    from transformers import AutoModelForCausalLM

    found = check_model_folder(Path(path), trust_remote_code=trust_remote_code, allow_pickle=allow_pickle)
    return AutoModelForCausalLM.from_pretrained(
        str(path), trust_remote_code=trust_remote_code, use_safetensors=bool(found["safetensors"]),
        local_files_only=True, **kwargs)


def load_tokenizer(path: Path | str, *, trust_remote_code: bool = False, **kwargs: Any):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), trust_remote_code=trust_remote_code, local_files_only=True,
                                         **kwargs)


def load_dataset_config(path: Path | str, config: str, split: str = "train"):
    """Read ``<path>/<config>/*.jsonl`` (or ``*.parquet``) with the data-file builders; no loading script."""
    from datasets import load_dataset

    folder = Path(path) / config
    jsonl = sorted(str(p) for p in folder.glob("*.jsonl"))
    parquet = sorted(str(p) for p in folder.glob("*.parquet"))
    if not jsonl and not parquet:
        raise FileNotFoundError(f"{folder}: no *.jsonl or *.parquet files; download the {config!r} subset first")
    builder, files = ("json", jsonl) if jsonl else ("parquet", parquet)
    return load_dataset(builder, data_files={split: files}, split=split)
