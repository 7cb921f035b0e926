"""A pretrained policy for ``model.source: pretrained`` on the local backend (the small profile's SmolLM2).

``model.name`` is a local Hugging Face folder (``recipe model import`` writes one for SmolLM2-135M-Instruct); the
local backend never downloads here (``recipe hub download`` / ``recipe model import --from-hub`` do, with pins).
With ``model.thinking: plain_tokens`` the tokenizer gets the plain-token thinking template
(``recipe.model.plain_thinking``), which every checkpoint of the run then carries.
"""
from __future__ import annotations

from pathlib import Path

from recipe.config.model_section import ModelSection
from recipe.model.build import load_checkpoint
from recipe.model.plain_thinking import adopt_plain_thinking


def load_pretrained(section: ModelSection):
    """(model, tokenizer) from the local folder ``section.name``, in float32, eval mode."""
    path = Path(section.name)
    if not (path / "config.json").exists():
        hint = (" (import SmolLM2-135M-Instruct there with `recipe model import --out " + str(path) + "`)"
                if "smollm2" in path.name.lower() else "")
        raise FileNotFoundError(f"model.name: {path} is not a local Hugging Face model folder (no config.json){hint}")
    model, tok = load_checkpoint(path, trust_remote_code=section.trust_remote_code)
    if section.thinking == "plain_tokens":
        adopt_plain_thinking(tok)
    if tok.pad_token_id is None:
        raise ValueError(f"{path}: the tokenizer has no pad token; the trainers pad batches")
    return model, tok
