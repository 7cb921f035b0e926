"""The benchmarks the harness runs, one module per family, each registering its suites on import
(``registry.register_suite``): ``math`` (AIME 2025, HMMT Feb 2025; graded by ``math_grading``), ``ifeval`` (IFEval,
IFBench), ``code`` (LiveCodeBench), ``arena_hard`` (ArenaHard v2), ``agentic`` (LongBench v2, SWE-bench Verified),
``tiny`` (the tiny domains' held-out rows), ``tiny_agentic`` (the agentic SWE domain, played as episodes). Importing anything of this package registers them all; look a suite up
with ``registry.get_suite``."""
from recipe.eval.benchmarks import arena_hard, ifeval, livecodebench, longbench_swebench, math, tiny, tiny_agentic  # noqa: F401
