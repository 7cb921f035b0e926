"""Judge one C++ submission on a Kattis package in ``recipe.sandbox``: compiled once (EVAL.md §6 flags), run on
the samples then the secret cases in name order, stopping at the first rejection (ICPC: a problem is solved only
if every test passes). Verdicts: AC, WA, TLE, MLE, RTE, CE. A custom output validator (compiled once per problem,
``g++ -std=gnu++17 -O2``) runs as ``validator input judge_answer feedback_dir < team_output``: exit 42 = accepted,
43 = wrong answer, anything else = judge error (reported, never accepted)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from recipe.eval.olympiad.icpc.kattis_package import KattisProblem
from recipe.eval.olympiad.icpc.output_validator import default_validate
from recipe.eval.olympiad.ioi.ioi_judge import with_task_prelude
from recipe.sandbox import Limits, Session
from recipe.sandbox.cpp import CHECKER_FLAGS, COMPILE_LIMITS, SOLUTION_FLAGS

_VERDICT = {"timeout": "TLE", "memory": "MLE", "runtime_error": "RTE", "killed": "RTE", "output_limit": "RTE"}


@dataclass
class Judgement:
    verdict: str
    cases_run: int = 0
    failed_case: str | None = None
    max_time_s: float = 0.0
    detail: str = ""
    samples_passed: bool | None = None  # None: compile error
    secret_run: bool = False  # False when the run stopped on the (public) samples before any secret case

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ICPCJudge:
    problem: KattisProblem
    unsafe_no_isolation: bool = False
    validator_bin: bytes | None = field(default=None, init=False)

    def __post_init__(self):
        p = self.problem
        self.limits = Limits(time_limit_s=p.time_limit_s, memory_mb=p.memory_mb, wall_limit_s=p.time_limit_s + 3,
                             stack_unlimited=True, max_processes=8, stdout_limit_bytes=64 << 20, workdir_quota_mb=256)
        if p.validator_source is not None:
            with Session(COMPILE_LIMITS, unsafe_no_isolation=self.unsafe_no_isolation) as s:
                s.write("validator.cpp", p.validator_source.read_bytes())
                v = s.run(["g++", *CHECKER_FLAGS, "validator.cpp", "-o", "validator"])
                if v.status != "ok":
                    raise ValueError(f"{p.validator_source}: output validator does not compile: {v.stderr[-500:]}")
                self.validator_bin = s.read("validator")

    def _accepts(self, s: Session, inp: bytes, ans: bytes, out: str) -> tuple[bool | None, str]:
        if self.validator_bin is None:
            return default_validate(out, ans.decode(errors="replace"), self.problem.validator_flags), ""
        s.write("validator", self.validator_bin, 0o755)
        s.write("judge.in", inp)
        s.write("judge.ans", ans)
        s.write("feedback/.keep", "")
        v = s.run(["./validator", "judge.in", "judge.ans", "feedback"], stdin=out, limits=Limits(time_limit_s=10, memory_mb=2048))
        for n in ("validator", "judge.in", "judge.ans"):
            (s.path / n).unlink(missing_ok=True)
        if v.exit_code == 42:
            return True, ""
        if v.exit_code == 43:
            return False, ""
        return None, f"validator exit {v.exit_code} ({v.status})"

    def judge(self, source: str | None, *, samples_only: bool = False) -> Judgement:
        """Samples first, then (unless ``samples_only``) the secret cases; one compilation."""
        if source is None:
            return Judgement("CE", detail="no C++ code block")
        n_samples = len(self.problem.samples)
        cases = self.problem.samples if samples_only else self.problem.samples + self.problem.secret
        with Session(self.limits, unsafe_no_isolation=self.unsafe_no_isolation) as s:
            s.write("main.cpp", with_task_prelude(source, None))
            c = s.run(["g++", *SOLUTION_FLAGS, "main.cpp", "-o", "main"], limits=COMPILE_LIMITS)
            if c.status != "ok":
                return Judgement("CE", detail=c.stderr[-2000:])
            j = Judgement("AC")
            for i, (inp, ans) in enumerate(cases):
                if i == n_samples:
                    j.samples_passed, j.secret_run = True, True
                v = s.run(["./main"], stdin=inp.read_bytes(), limits=self.limits)
                j.cases_run += 1
                j.max_time_s = max(j.max_time_s, v.cpu_s)
                case = str(inp.relative_to(self.problem.root))
                if v.status != "ok":
                    j.verdict, j.failed_case, j.detail = _VERDICT.get(v.status, "RTE"), case, v.detail
                    break
                ok, why = self._accepts(s, inp.read_bytes(), ans.read_bytes(), v.stdout)
                if ok is None:
                    j.verdict, j.failed_case, j.detail = "JE", case, why
                    break
                if not ok:
                    j.verdict, j.failed_case = "WA", case
                    break
            if j.samples_passed is None:
                j.samples_passed = j.verdict == "AC" or j.cases_run > n_samples
            return j
