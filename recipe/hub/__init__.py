"""Hugging Face Hub in both directions (DESIGN.md §7).

- ``download``: NVIDIA's released model and data via ``snapshot_download`` (pinned revision,
  ``allow_patterns``), with a manifest of what was fetched and its sha256.
- ``publish``: a run's stage checkpoint to ``ORG/NAME`` on a branch named after the stage, with a model
  card generated from the run layout; curated datasets with their data cards.
- ``safe_load``: loading anything downloaded without executing repository code or unpickling.
- ``errors``: the client's exceptions turned into messages that name the repo, the endpoint and the fix.

Tokens are never read, stored or printed here: ``huggingface_hub`` takes them from ``HF_TOKEN`` or the
``hf auth login`` file itself.
"""
from recipe.hub.hub_errors import HubError, HubUnreachableError, UntrustedArtifactError

__all__ = ["HubError", "HubUnreachableError", "UntrustedArtifactError"]
