"""The policy model: tiny NemotronH builder, offline tokenizer, Nemotron chat template, checkpoint I/O."""
from recipe.model.build import build_tiny, load_checkpoint, save_checkpoint
from recipe.model.chat_template import CHAT_TEMPLATE, THINK_CLOSE, THINK_OPEN

__all__ = ["CHAT_TEMPLATE", "THINK_CLOSE", "THINK_OPEN", "build_tiny", "load_checkpoint", "save_checkpoint"]
