"""ICPC scoring (EVAL.md §7): Kattis packages, sandboxed judging, a submission policy, solved / penalty."""
from recipe.eval.olympiad.icpc.icpc_judge import ICPCJudge, Judgement
from recipe.eval.olympiad.icpc.kattis_package import KattisPackageError, KattisProblem, load_kattis
from recipe.eval.olympiad.icpc.policy import ICPCCandidate, simulate_contest
from recipe.eval.olympiad.icpc.icpc_standings import Run, standings

__all__ = ["ICPCCandidate", "ICPCJudge", "Judgement", "KattisPackageError", "KattisProblem", "Run", "load_kattis",
           "simulate_contest", "standings"]
