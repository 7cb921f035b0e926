"""The policy model: tiny NemotronH builder, offline tokenizer, Nemotron chat template, checkpoint I/O.

``build_tiny``, ``load_checkpoint`` and ``save_checkpoint`` (``recipe.model.build``, which imports torch and
transformers) load on first use, so the chat template alone (the data phase's domain generators) costs no torch."""
from recipe.model.chat_template import CHAT_TEMPLATE, THINK_CLOSE, THINK_OPEN

__all__ = ["CHAT_TEMPLATE", "THINK_CLOSE", "THINK_OPEN", "build_tiny", "load_checkpoint", "save_checkpoint"]
_BUILD = ("build_tiny", "load_checkpoint", "save_checkpoint")


def __getattr__(name: str):
    if name in _BUILD:
        from recipe.model import build
        return getattr(build, name)
    raise AttributeError(f"module 'recipe.model' has no attribute {name!r}")
