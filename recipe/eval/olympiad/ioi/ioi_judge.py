"""Build and run IOI submissions in ``recipe.sandbox`` and score them by the package's subtasks.

Build (EVAL.md §6): take the last fenced ``cpp`` block of a generation (or the whole file), prepend
``<bits/stdc++.h>``, the task header (grader compilation) and ``using namespace std`` when missing, compile once
per submission ``g++ -DEVAL -std=gnu++17 -O2 -pipe -s <code>.cpp [grader.cpp]`` inside the sandbox; the checker
once per task with ``g++ -std=gnu++17 -O2``.
Run: each test in a fresh sandbox run with the task's time limit (× ``time_scale``) as CPU limit, its memory limit
as address-space limit, ``ulimit -s unlimited``, and a hard wall kill at TL + 3 s. The expected output is written
into the work dir only after the submission finished. Verdicts: OK, WA, PA (partial checker score), TLE, MLE, RE,
CE. Checker protocol (CMS): ``checker input correct_output contestant_output`` prints a score in [0, 1] on stdout;
without a checker the output must equal the expected one up to whitespace (``diff -b`` style, line by line).
A subtask stops at its first 0-score test (tests another subtask still needs run when that subtask is evaluated).
"""
from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import asdict, dataclass, field

from recipe.eval.olympiad.ioi.ioi_package import TaskPackage
from recipe.eval.olympiad.ioi.ioi_scoring import submission_subtask_scores, worst_status
from recipe.sandbox import Limits, Session
from recipe.sandbox.cpp import CHECKER_FLAGS, COMPILE_LIMITS, SOLUTION_FLAGS

_FENCE = re.compile(r"```(?:cpp|c\+\+|cc|cxx)[^\n]*\n(.*?)```", re.S | re.I)
_SANDBOX_TO_VERDICT = {"timeout": "TLE", "memory": "MLE", "runtime_error": "RE", "killed": "RE", "output_limit": "RE"}
HARD_WALL_EXTRA_S = 3.0


def extract_cpp(text: str) -> str | None:
    """The last fenced C++ block of a model generation; a plain .cpp file (no fence) is returned as is."""
    blocks = _FENCE.findall(text)
    if blocks:
        return blocks[-1]
    if "```" in text:
        return None  # fenced, but no C++ block: nothing to compile
    return text if text.strip() else None


def with_task_prelude(source: str, header: str | None) -> str:
    head = ""
    if "bits/stdc++.h" not in source:
        head += "#include <bits/stdc++.h>\n"
    if header and f'"{header}"' not in source:
        head += f'#include "{header}"\n'
    if "using namespace std" not in source:
        head += "using namespace std;\n"
    return head + source


def diff_b_equal(got: bytes, expected: bytes) -> bool:
    """Equal up to whitespace runs inside lines and trailing blank lines (``diff -b`` style)."""
    def norm(b: bytes) -> list[list[bytes]]:
        lines = [ln.split() for ln in b.replace(b"\r\n", b"\n").split(b"\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines
    return norm(got) == norm(expected)


@dataclass
class TestResult:
    verdict: str
    score: float
    time_s: float
    detail: str = ""


@dataclass
class SubmissionResult:
    name: str
    compiled: bool
    tests: dict[str, TestResult] = field(default_factory=dict)
    subtasks: dict[str, dict] = field(default_factory=dict)
    total: float = 0.0
    compile_log: str = ""
    scope: str = "all"  # "all" (every subtask) or "public" (sample subtasks only)
    isolation: dict = field(default_factory=dict)  # sandbox mode; processes left after runs (always 0 expected)

    def subtask_scores(self) -> dict[str, float]:
        return {k: v["score"] for k, v in self.subtasks.items()}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tests"] = {k: asdict(v) for k, v in self.tests.items()}
        return d


class IOIJudge:
    """Compiles the task's checker once, then evaluates submissions one by one (each compiled once)."""

    def __init__(self, pkg: TaskPackage, *, time_scale: float = 1.0, stop_at_zero: bool = True,
                 unsafe_no_isolation: bool = False, max_processes: int = 8):
        pkg.require_runnable()
        self.pkg = pkg
        self.time_scale = time_scale
        self.stop_at_zero = stop_at_zero
        self.unsafe = unsafe_no_isolation
        tl = pkg.time_limit_s * time_scale
        self.limits = Limits(time_limit_s=tl, memory_mb=pkg.memory_limit_mb, wall_limit_s=tl + HARD_WALL_EXTRA_S,
                             stack_unlimited=True, max_processes=max_processes, stdout_limit_bytes=64 << 20,
                             max_file_mb=64, workdir_quota_mb=256)
        self.checker_bin: bytes | None = None
        self._builds: dict[str, tuple[bool, str, bytes]] = {}  # sha256(source) → (ok, log, binary): compile once
        if pkg.checker_source:
            self.checker_bin = self._compile_checker()

    def describe(self) -> dict:
        """What a reported score depends on (EVAL.md §8 'Record')."""
        return {"compiler": shutil.which("g++"), "solution_flags": SOLUTION_FLAGS, "checker_flags": CHECKER_FLAGS,
                "time_limit_s": self.limits.time_limit_s, "time_scale": self.time_scale,
                "memory_limit_mb": self.limits.memory_mb, "hard_wall_s": self.limits.wall_s,
                "checker": bool(self.checker_bin), "grader": self.pkg.grader_compilation}

    def _compile_checker(self) -> bytes:
        with Session(COMPILE_LIMITS, unsafe_no_isolation=self.unsafe) as s:
            s.write("checker.cpp", self.pkg.checker_source.read_bytes())
            for h in self.pkg.checker_source.parent.glob("*.h"):
                s.write(h.name, h.read_bytes())
            v = s.run(["g++", *CHECKER_FLAGS, "checker.cpp", "-o", "checker"])
            if v.status != "ok":
                raise ValueError(f"{self.pkg.checker_source}: checker does not compile: {v.stderr[-800:]}")
            return s.read("checker")

    def _build(self, s: Session, source: str) -> tuple[bool, str]:
        """Compile (once per distinct source for this judge; later calls reuse the binary)."""
        key = hashlib.sha256(source.encode()).hexdigest()
        if key in self._builds:
            ok, log, binary = self._builds[key]
            if ok:
                s.write("sol", binary, 0o755)
            return ok, log
        ok, log = self._compile(s, source)
        self._builds[key] = (ok, log, s.read("sol") if ok else b"")
        return ok, log

    def _compile(self, s: Session, source: str) -> tuple[bool, str]:
        header = None
        sources = [f"{self.pkg.code}.cpp"]
        if self.pkg.grader_compilation:
            for f in sorted(self.pkg.graders_dir.iterdir()):
                if f.is_file() and f.suffix in (".cpp", ".h", ".hpp") and f.name not in ("manager.cpp", "stub.cpp"):
                    s.write(f.name, f.read_bytes())
            header = f"{self.pkg.code}.h" if (self.pkg.graders_dir / f"{self.pkg.code}.h").is_file() else None
            sources.append("grader.cpp")
        s.write(f"{self.pkg.code}.cpp", with_task_prelude(source, header))
        v = s.run(["g++", *SOLUTION_FLAGS, *sources, "-o", "sol"], limits=COMPILE_LIMITS)
        return v.status == "ok", (v.stderr or v.detail)[-4000:]

    def _run_test(self, s: Session, test: str) -> TestResult:
        v = s.run(["./sol"], stdin=self.pkg.input_bytes(test), limits=self.limits)
        self._leftover = max(self._leftover, int(v.isolation.get("leftover_processes", 0) or 0))
        self._mode = v.isolation.get("mode", "")
        if v.status != "ok":
            return TestResult(_SANDBOX_TO_VERDICT.get(v.status, "RE"), 0.0, v.cpu_s, v.detail)
        expected = self.pkg.output_bytes(test)
        if self.checker_bin is None:
            ok = diff_b_equal(v.stdout.encode(), expected)
            return TestResult("OK" if ok else "WA", 1.0 if ok else 0.0, v.cpu_s)
        s.write("checker", self.checker_bin, 0o755)
        s.write("input.txt", self.pkg.input_bytes(test))
        s.write("correct.txt", expected)
        s.write("output.txt", v.stdout)
        cv = s.run(["./checker", "input.txt", "correct.txt", "output.txt"], limits=Limits(time_limit_s=10, memory_mb=2048))
        for name in ("input.txt", "correct.txt", "output.txt", "checker"):
            (s.path / name).unlink(missing_ok=True)
        score = _checker_score(cv.stdout) if cv.status == "ok" else None
        if score is None:
            return TestResult("RE", 0.0, v.cpu_s, f"checker failed: {cv.status} {cv.stderr[-200:]}")
        verdict = "OK" if score >= 1.0 else ("WA" if score <= 0.0 else "PA")
        return TestResult(verdict, score, v.cpu_s, cv.stderr.strip()[-200:])

    def evaluate(self, source: str | None, name: str, *, public_only: bool = False) -> SubmissionResult:
        subtasks = [st for st in self.pkg.subtasks if st.public] if public_only else list(self.pkg.subtasks)
        res = SubmissionResult(name, False, scope="public" if public_only else "all")
        self._leftover, self._mode = 0, ""
        if source is None:
            res.compile_log = "no C++ code block in the generation"
        else:
            with Session(self.limits, unsafe_no_isolation=self.unsafe) as s:
                res.compiled, res.compile_log = self._build(s, source)
                if res.compiled:
                    res.compile_log = ""
                    for st in subtasks:
                        for t in st.tests:
                            if t not in res.tests:
                                res.tests[t] = self._run_test(s, t)
                            if self.stop_at_zero and res.tests[t].score == 0.0:
                                break
        res.isolation = {"mode": self._mode, "leftover_processes": self._leftover}
        prec = self.pkg.score_precision
        if res.compiled:
            scores = submission_subtask_scores(subtasks, {t: r.score for t, r in res.tests.items()}, prec)
        else:
            scores = {st.name: 0.0 for st in subtasks}
        for st in subtasks:
            statuses = [res.tests[t].verdict for t in st.tests if t in res.tests] if res.compiled else ["CE"]
            res.subtasks[st.name] = {"score": scores[st.name], "points": st.points, "status": worst_status(statuses)}
        res.total = round(sum(scores.values()), prec)
        return res


def _checker_score(stdout: str) -> float | None:
    tok = stdout.strip().split()
    if not tok:
        return None
    try:
        return min(1.0, max(0.0, float(tok[0])))
    except ValueError:
        return None


