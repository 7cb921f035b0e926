"""Evaluation: the benchmark harness (entry point ``api.evaluate``: ``recipe eval``, ``notebooks/50_eval.ipynb``).
The per-domain validation that training runs is ``recipe.validation``."""
