"""The online twin of ``recipe.model.gguf_import``: a pretrained model's HF folder straight from the Hub.

Uses the project's Hub download (``recipe.hub.download.download_artifact``: pinned commit, safetensors and
tokenizer/config files only -- never pickle weights or repository code -- each file checked against the Hub's
listing and recorded with its sha256) and adds ``import_manifest.json`` in the same shape as the GGUF import, so
both folders are used the same way (``recipe eval --checkpoint`` or a vLLM server).
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from recipe.model.gguf_import import MANIFEST_NAME

# The commit of HuggingFaceTB/SmolLM2-135M-Instruct that public references cite as its immutable model card and
# weights; it could not be checked against the Hub from the machine this was written on (no Hub access), so the
# manifest records it as unverified until a download resolves it.
SMOLLM2_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_REVISION = "12fd25f77366fa6b3b4b768ec3050bf629380bac"
MODEL_FILES = ["config.json", "generation_config.json", "*.safetensors", "*.safetensors.index.json", "tokenizer*",
               "special_tokens_map.json", "vocab.json", "merges.txt", "*.jinja"]


def import_from_hub(out_dir: Path, *, repo_id: str = SMOLLM2_REPO, revision: str = SMOLLM2_REVISION,
                    endpoint: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Download ``repo_id`` at ``revision`` (safe files only) into ``out_dir`` and write the import manifest."""
    from recipe.config.hub_section import HubArtifact, HubSection
    from recipe.hub.download import download_artifact
    from recipe.hub.hub_errors import HubError
    from recipe.runs.layout import write_json_atomic

    out_dir = Path(out_dir)
    artifact = HubArtifact(repo_id=repo_id, repo_type="model", revision=revision, license="see the model card",
                           always=["README.md"], subsets={"model": MODEL_FILES}, default_subsets=["model"])
    section = HubSection(released_model=artifact, download_dir=str(out_dir.parent))
    dl = download_artifact(section, "released_model", local_dir=out_dir, endpoint=endpoint, progress=progress)
    names = {f["path"] for f in dl["files"]}
    missing = [n for n in ("config.json", "tokenizer_config.json") if n not in names]
    if missing or not any(n.endswith(".safetensors") for n in names):
        raise HubError(f"{repo_id}@{dl['resolved_commit'][:12]} is not a safetensors model folder (missing "
                       f"{missing or '*.safetensors'})")
    manifest = {
        "source": "hub",
        "origin": repo_id,
        "requested_revision": revision,
        "resolved_commit": dl["resolved_commit"],
        "pinned": dl["pinned"],
        "endpoint": dl["endpoint"],
        "weights": "the repository's own safetensors, as published (no conversion)",
        "files": dl["files"],
        "imported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    write_json_atomic(out_dir / MANIFEST_NAME, manifest)
    return manifest
