"""Evaluation: the benchmark harness. ``api.evaluate`` is what ``recipe eval``, ``notebooks/50_eval.ipynb`` and the
eval phase of ``recipe run`` (``run_phase``) call; ``harness`` generates k samples per row through a backend, caches
and scores them; ``score_file`` scores responses that already exist. Its parts: ``backends`` (how text is generated),
``benchmarks`` (the suites, one module per family, and their registry), ``olympiad`` (IMO / IOI / ICPC scoring by the
official rules), ``report`` (tables, comparisons with published numbers). The per-domain validation that training
runs is ``recipe.validation``."""
