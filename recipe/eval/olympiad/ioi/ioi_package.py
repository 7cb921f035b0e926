"""IOI task packages in the CMS layout of ``ioi-2024/tasks`` (EVAL.md §6, fixture ``ioi2024/``).

A package directory holds ``problem.json`` (``code``, ``time_limit`` s, ``memory_limit`` bytes, ``score_precision``,
``task_type`` Batch | Communication, ``task_type_params``), ``subtasks/NN-name.json`` (``{"score": points,
"testcases": [...]}``; tests are shared between subtasks) and ``tests/<name>.in|.out``. Code that is not data
(``graders/`` with ``grader.cpp`` + ``<code>.h`` or ``manager.cpp``, ``checker/checker.cpp``) may sit in the same
directory or in a separate ``support`` directory with the same sub-folders (the fixtures carry data only).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


class PackageError(ValueError):
    """The directory is not a valid task package (the message says which file and why)."""


class UnsupportedTask(ValueError):
    """The package is valid but this task type cannot be run here (e.g. Communication without a manager)."""


@dataclass(frozen=True)
class Subtask:
    name: str
    points: float
    tests: tuple[str, ...]

    @property
    def public(self) -> bool:
        """Sample subtasks (0 points or named ``*samples*``) are visible to contestants: legal selection signal."""
        return self.points == 0 or "sample" in self.name


@dataclass
class TaskPackage:
    root: Path
    code: str
    name: str
    time_limit_s: float
    memory_limit_bytes: int
    score_precision: int
    task_type: str
    task_type_params: dict
    subtasks: list[Subtask]
    tests: list[str]
    graders_dir: Path | None = None
    checker_source: Path | None = None
    manager_source: Path | None = None
    extra: dict = field(default_factory=dict)

    # -- task kind ---------------------------------------------------------------------------
    @property
    def grader_compilation(self) -> bool:
        return any(str(v) == "grader" for k, v in self.task_type_params.items() if k.endswith("compilation"))

    @property
    def memory_limit_mb(self) -> int:
        return max(1, self.memory_limit_bytes >> 20)

    @property
    def max_score(self) -> float:
        return round(sum(s.points for s in self.subtasks), self.score_precision)

    def unsupported_reason(self) -> str | None:
        """None when the task can be run end to end here; otherwise why not."""
        if self.task_type == "Communication":
            return ("Communication task: running needs the official manager (graders/manager.cpp + stub.cpp), which "
                    "the fixtures do not carry, and manager/FIFO runs are not implemented here: unsupported. The "
                    "package format and the scoring arithmetic (from per-test scores) are supported.")
        if self.task_type != "Batch":
            return f"task type {self.task_type!r} is not supported"
        if self.grader_compilation and not (self.graders_dir and (self.graders_dir / "grader.cpp").is_file()):
            return "Batch task with grader compilation: graders/grader.cpp not found (pass --support DIR)"
        return None

    def require_runnable(self) -> None:
        why = self.unsupported_reason()
        if why:
            raise UnsupportedTask(f"{self.code}: {why}")

    # -- data ------------------------------------------------------------------------------
    def input_bytes(self, test: str) -> bytes:
        return (self.root / "tests" / f"{test}.in").read_bytes()

    def output_bytes(self, test: str) -> bytes:
        return (self.root / "tests" / f"{test}.out").read_bytes()

    def subtask(self, name: str) -> Subtask:
        for s in self.subtasks:
            if s.name == name:
                return s
        raise KeyError(f"{self.code} has no subtask {name!r}; it has {[s.name for s in self.subtasks]}")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise PackageError(f"{path}: missing") from None
    except json.JSONDecodeError as e:
        raise PackageError(f"{path}: not valid JSON ({e})") from None


def load_task(root: str | Path, support: str | Path | None = None) -> TaskPackage:
    """Read and validate a CMS task package; ``support`` overlays ``graders/`` and ``checker/`` code."""
    root = Path(root)
    if not root.is_dir():
        raise PackageError(f"{root}: not a directory")
    meta = _read_json(root / "problem.json")
    for key in ("code", "time_limit", "memory_limit", "task_type"):
        if key not in meta:
            raise PackageError(f"{root / 'problem.json'}: missing key {key!r}")
    params = meta.get("task_type_params") or {}
    if isinstance(params, str):
        params = json.loads(params) if params.strip() else {}
    tests = sorted(p.stem for p in (root / "tests").glob("*.in"))
    if not tests:
        raise PackageError(f"{root / 'tests'}: no *.in files")
    missing_out = [t for t in tests if not (root / "tests" / f"{t}.out").is_file()]
    if missing_out:
        raise PackageError(f"{root / 'tests'}: no .out for {missing_out[:5]}")
    subtasks = []
    for f in sorted((root / "subtasks").glob("*.json")):
        d = _read_json(f)
        if "score" not in d or "testcases" not in d:
            raise PackageError(f"{f}: needs 'score' and 'testcases'")
        unknown = [t for t in d["testcases"] if t not in tests]
        if unknown:
            raise PackageError(f"{f}: tests not in tests/: {unknown[:5]}")
        if not d["testcases"]:
            raise PackageError(f"{f}: a subtask needs at least one test")
        subtasks.append(Subtask(f.stem, float(d["score"]), tuple(d["testcases"])))
    if not subtasks:
        raise PackageError(f"{root / 'subtasks'}: no subtask files")

    def find(*rel: str) -> Path | None:
        for base in ([Path(support)] if support else []) + [root]:
            for r in rel:
                if (base / r).exists():
                    return base / r
        return None

    return TaskPackage(
        root=root, code=str(meta["code"]), name=str(meta.get("name", meta["code"])),
        time_limit_s=float(meta["time_limit"]), memory_limit_bytes=int(meta["memory_limit"]),
        score_precision=int(meta.get("score_precision", 2)), task_type=str(meta["task_type"]),
        task_type_params=params, subtasks=subtasks, tests=tests, graders_dir=find("graders"),
        checker_source=find("checker/checker.cpp", "check/checker.cpp"), manager_source=find("graders/manager.cpp"),
        extra={k: v for k, v in meta.items() if k not in ("code", "name", "time_limit", "memory_limit")},
    )
