"""Evaluation: per-domain validation of the tiny domains (``validate``) and the benchmark harness -- suites
(``suites``: registry), generation backends (``hf_backend``, ``openai_client``), the harness with its sample cache
(``harness``), scoring of existing responses (``score_file``), results vs the paper (``report``); entry point
``api.evaluate`` (``recipe eval``, ``notebooks/50_eval.ipynb``)."""
from recipe.eval.validate import validate_domains

__all__ = ["validate_domains"]
