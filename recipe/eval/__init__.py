"""Evaluation: per-domain validation of a checkpoint (tiny domains); benchmark suites build on it."""
from recipe.eval.validate import validate_domains

__all__ = ["validate_domains"]
