"""IOI scoring (EVAL.md §6): CMS task packages, sandboxed C++ judging, subtask arithmetic, legal selection."""
from recipe.eval.olympiad.ioi.ioi_judge import IOIJudge, SubmissionResult, extract_cpp
from recipe.eval.olympiad.ioi.ioi_package import PackageError, TaskPackage, UnsupportedTask, load_task
from recipe.eval.olympiad.ioi.ioi_scoring import subtask_score, submission_subtask_scores, task_score

__all__ = ["IOIJudge", "PackageError", "SubmissionResult", "TaskPackage", "UnsupportedTask", "extract_cpp",
           "load_task", "submission_subtask_scores", "subtask_score", "task_score"]
