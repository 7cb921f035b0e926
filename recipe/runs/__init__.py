"""The run directory: the contract between phases, notebooks and both backends (DESIGN.md §3)."""
from recipe.runs.layout import RunDir, runs_root, write_json_atomic

__all__ = ["RunDir", "runs_root", "write_json_atomic"]
