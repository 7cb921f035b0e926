"""The sandbox: the only module allowed to run model-written code (EVAL.md §8).

``run(program, files=..., stdin=..., limits=Limits(...))`` → ``Verdict``; ``Session`` for several runs
sharing one private work dir (compile, then run); ``recipe.sandbox.cpp`` for competitive-programming C++
(compile flags of EVAL.md §6, tests against expected output or a checker). See ``runner`` for what the
isolation does and does not cover.
"""
from recipe.sandbox.bwrap import SandboxUnavailable, probe
from recipe.sandbox.bwrap_runner import Session, run
from recipe.sandbox.types import Limits, Verdict

__all__ = ["Limits", "SandboxUnavailable", "Session", "Verdict", "probe", "run"]
