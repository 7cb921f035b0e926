"""Validation that the training stages run: each checkpoint scored per domain on held-out prompts by the training
verifiers, with a 95% CI (``validate``), optionally spread over worker processes (``lanes``), every sample kept on
disk (``samples``). Benchmarks of a finished model are ``recipe.eval``."""
