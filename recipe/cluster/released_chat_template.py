"""The chat template a paper-scale SFT job trains with: the released model's own, from its pinned download.

At paper scale the template is the one shipped with NVIDIA's released tokenizer (``nvidia/Nemotron-Cascade-2-30B-A3B``,
``hub.released_model``), fetched with ``recipe hub download released-model --subset config`` at the revision the
profile pins. The tiny hand-written template (``recipe.model.chat_template``) only serves the tiny profile; a test
compares the two on the shared fixture conversations wherever the released file is present. The download's
manifest must name the pinned commit, so a template from another revision is refused.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from recipe.hub.download import MANIFEST_NAME, default_local_dir


def released_template_dir(cfg, project_root: Path | None = None) -> Path:
    d = default_local_dir(cfg.hub, cfg.hub.released_model)
    if not d.is_absolute() and not d.exists() and project_root is not None:
        d = Path(project_root) / d
    return d


def read_template(folder: Path) -> str | None:
    """``chat_template.jinja`` of an HF folder, else ``tokenizer_config.json``'s ``chat_template`` (None: neither)."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text()
    tc = folder / "tokenizer_config.json"
    if tc.is_file():
        t = json.loads(tc.read_text()).get("chat_template")
        if isinstance(t, str):
            return t
        if isinstance(t, list):  # named templates: the default one
            named = {e.get("name"): e.get("template") for e in t if isinstance(e, dict)}
            return named.get("default")
    return None


def released_template(cfg, project_root: Path | None = None) -> tuple[str, dict[str, Any]]:
    """(template text, provenance) from the pinned download of the released model; raises with the fix."""
    art = cfg.hub.released_model
    folder = released_template_dir(cfg, project_root)
    how = (f"run `recipe hub download released-model --subset config --profile {cfg.profile}` (revision "
           f"{art.revision}) so {folder} holds the released tokenizer")
    text = read_template(folder)
    if text is None:
        raise FileNotFoundError(f"no released chat template in {folder}: {how}")
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} has no {MANIFEST_NAME}: its revision is unknown; {how}")
    manifest = json.loads(manifest_path.read_text())
    commit = manifest.get("resolved_commit")
    if art.pinned and commit != art.revision:
        raise ValueError(f"{folder} holds revision {commit} of {art.repo_id}, the profile pins {art.revision}: {how}")
    return text, {"source": "released", "repo_id": art.repo_id, "revision": commit,
                  "revision_verified": bool(manifest.get("revision_checked_against_hub", False)),
                  "path": str(folder), "sha256": hashlib.sha256(text.encode()).hexdigest()}
