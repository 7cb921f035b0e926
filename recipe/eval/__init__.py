"""Evaluation: per-domain validation of the tiny domains (``validate``) and the benchmark harness -- suites
(``suites``: registry), generation backends (``hf_backend``, ``openai_client``), the harness with its sample cache
(``harness``), scoring of existing responses (``score_file``), results vs the paper (``report``); entry point
``api.evaluate`` (``recipe eval``, ``notebooks/50_eval.ipynb``)."""
__all__ = ["validate_domains"]


def __getattr__(name: str):
    """``recipe.eval.validate_domains`` on first use: importing the package (e.g. for ``recipe.eval.samples``) does
    not load torch and transformers."""
    if name == "validate_domains":
        from recipe.eval.validate import validate_domains
        return validate_domains
    raise AttributeError(f"module 'recipe.eval' has no attribute {name!r}")
