"""The olympiad suites of ``recipe eval score --suite imo-answer|imo-proof|ioi|icpc`` (options: ``ScoreOptions``,
set by ``recipe.cli.eval_cmd``): re-score existing generations by these rules.

- ``ioi``: ``--task TASK_DIR --submissions DIR_OF_CPP_FILES --out OUT [--support DIR]``. Every ``*.cpp`` (or
  generation text with a fenced cpp block) in the folder is one submission, in file-name order; the first 50 are
  the legal submissions, all of them give the oracle upper bound. Writes ``OUT/results.json`` (each submission by
  file name with per-subtask scores/statuses, per-test verdicts and total; the task score; legal/oracle/counts;
  judge settings), ``OUT/submissions/<file>.json`` each, and prints the summary. With ``--select`` the folder holds
  generations: at most 50 are chosen from public-test results only (``ioi.pipeline.run_task``) and the legal score,
  ``--oracle`` upper bound, generations and submissions used are reported separately.
- ``icpc``: ``--problems DIR`` (one Kattis package per sub-folder, named by problem letter) ``--submissions DIR``
  (``<problem>/<any>.cpp`` or ``<problem>_<any>.cpp``, taken in name order) ``--out OUT``: solved, submissions per
  problem and simulated penalty, with the policy settings from the profile.
- ``imo-answer``: ``--responses FILE.jsonl`` (``Problem ID`` + ``response`` per line, optional ``thinking``
  on/off/auto (or true/false) per line, else ``--thinking``, default auto (``recipe.eval.thinking``: a closed think
  block is removed, an unclosed one is no answer, text without think tags is graded whole); k lines per problem)
  ``--data IMO_BENCH_DIR --judge-prompt FILE [--judge-endpoint URL --judge-model NAME]``: avg@k ± SE.
- ``imo-proof``: ``--responses FILE.jsonl`` (``Problem ID`` + ``response`` = the final proof) ``--data
  --judge-prompt --judge-endpoint --judge-model [--samples N --aggregation zero_if_any_zero|mean]``.
Settings default to the ``olympiad`` section of ``--profile`` (default ``paper``); flags override them.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

SUITES = ("imo-answer", "imo-proof", "ioi", "icpc")


@dataclasses.dataclass
class ScoreOptions:
    """The options of the olympiad suites, one field per ``recipe eval score`` option (``None``: the profile's)."""

    profile: str = "paper"
    task: str | None = None
    support: str | None = None
    submissions: str | None = None
    problems: str | None = None
    time_scale: float | None = None
    year: int | None = None
    select: bool = False
    oracle: bool = False
    data: str | None = None
    version: str | None = None
    judge_prompt: str | None = None
    judge_endpoint: str | None = None
    judge_model: str | None = None
    judge_api_key_env: str | None = None
    judge_server: str = "vllm"
    samples: int | None = None
    aggregation: str | None = None
    thinking: str | None = None

    SHARED = ("judge_endpoint", "judge_model", "thinking")  # options the other suites' scorers take too

    def olympiad_only_given(self) -> list[str]:
        """The olympiad-only options set away from their defaults, as flags: no other suite's scorer reads them."""
        return [f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(self)
                if f.name not in self.SHARED and getattr(self, f.name) != f.default]


class _LazyJudge:
    """Builds the harness client on first use, so responses the pre-check settles need no server."""

    def __init__(self, endpoint: str | None, model: str | None, key_env: str | None, sampling: dict, server: str = "vllm"):
        self.endpoint, self.model, self.key_env, self.sampling, self.server = endpoint, model, key_env, sampling, server
        self._chat = None

    def complete(self, messages: list[dict], **params: Any) -> str:
        if self._chat is None:
            if not self.endpoint or not self.model:
                raise ValueError("this response needs the judge model: pass --judge-endpoint URL --judge-model NAME")
            from recipe.eval.olympiad.completion_client import open_harness_chat
            self._chat = open_harness_chat(self.endpoint, self.model, self.sampling, key_env=self.key_env,
                                           server=self.server)
        return self._chat.complete(messages, **params)

    def describe(self) -> dict:
        return {"endpoint": self.endpoint, "model": self.model, "sampling": self.sampling, "server": self.server}


def _read_responses(path: str | None) -> list[dict]:
    if not path:
        raise ValueError("--responses FILE.jsonl is required for this suite")
    rows = []
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as e:
                raise ValueError(f"{path}:{no}: not JSON ({e})") from None
            if not isinstance(row, dict) or "Problem ID" not in row or "response" not in row:
                raise ValueError(f"{path}:{no}: needs 'Problem ID' and 'response'")
            rows.append(row)
    return rows


def as_response(row: dict) -> Any:
    """The row's response; a row marked ``"thinking": false`` (generated without reasoning) is graded whole."""
    resp, thinking = row["response"], row.get("thinking")
    if thinking is not None and not isinstance(thinking, bool):
        raise ValueError(f"field 'thinking' must be true/false, got {thinking!r}")
    if thinking is False and isinstance(resp, str):
        return {"role": "assistant", "content": resp, "reasoning_content": ""}  # nothing to strip
    return resp


def unless_unfinished(row: dict, response: Any, mode: bool | None) -> tuple[Any, bool | None]:
    """A line cut at the length limit before its reasoning closed (``finish_reason: length``) is no answer in every
    mode but off (``recipe.eval.thinking.unfinished``): it is graded as reasoning that never ended."""
    from recipe.eval.thinking import unfinished
    if unfinished(row["response"], row.get("finish_reason"), mode):
        return "<think>", True
    return response, mode


def default_thinking(args: ScoreOptions) -> bool | None:
    """The thinking flag of lines without their own: ``--thinking`` (``--no-thinking`` is off), else auto."""
    from recipe.eval.thinking import thinking_flag
    return thinking_flag(args.thinking)


def row_thinking(row: dict, default: bool | None) -> bool | None:
    """A line's own ``thinking`` field (on/off/auto or true/false), else ``default``."""
    from recipe.eval.thinking import thinking_flag
    return thinking_flag(row["thinking"]) if "thinking" in row else default


def _need(args: ScoreOptions, *names: str) -> None:
    missing = [f"--{n.replace('_', '-')}" for n in names if not getattr(args, n)]
    if missing:
        raise ValueError(f"suite needs {' '.join(missing)}")


def score_ioi(args: ScoreOptions, out: Path, cfg) -> dict:
    from recipe.eval.olympiad.ioi import IOIJudge, extract_cpp, load_task
    from recipe.eval.olympiad.ioi.ioi_contest_report import MEDAL_CUTOFFS
    from recipe.eval.olympiad.ioi.ioi_scoring import best_per_subtask, task_score
    _need(args, "task", "submissions")
    pkg = load_task(args.task, support=args.support)
    files = sorted(f for f in Path(args.submissions).iterdir() if f.is_file() and f.suffix in (".cpp", ".cc", ".txt", ".md"))
    if not files:
        raise ValueError(f"{args.submissions}: no .cpp/.cc/.txt/.md files")
    judge = IOIJudge(pkg, time_scale=args.time_scale or cfg.ioi.time_scale, stop_at_zero=cfg.ioi.stop_at_zero)
    year = args.year
    cut = (cfg.ioi.medal_cutoffs.get(year) if year else None) or MEDAL_CUTOFFS.get(year or 0)
    cap = cfg.ioi.max_submissions
    out.mkdir(parents=True, exist_ok=True)
    if args.select:
        from recipe.eval.olympiad.ioi.pipeline import run_task
        from recipe.eval.olympiad.ioi.selection import Candidate
        cands = [Candidate(f.name, extract_cpp(f.read_text(errors="replace"))) for f in files]
        res = {"suite": "ioi", "mode": "select"} | run_task(judge, cands, cap=cap, oracle=args.oracle)
        res |= {"judge": judge.describe(), "year": year, "medal_cutoffs": cut}
        (out / "results.json").write_text(json.dumps(res, indent=2))
        return res
    results = [judge.evaluate(extract_cpp(f.read_text(errors="replace")), f.name) for f in files]
    legal = results[:cap]
    scores_legal = [r.subtask_scores() for r in legal]
    res = {
        "suite": "ioi", "mode": "submissions", "task": pkg.code, "task_dir": str(args.task), "max_score": pkg.max_score,
        "task_score": task_score(scores_legal, pkg.subtasks, pkg.score_precision),
        "best_per_subtask": best_per_subtask(scores_legal, pkg.subtasks),
        "oracle_upper_bound": task_score([r.subtask_scores() for r in results], pkg.subtasks, pkg.score_precision),
        "submissions_used": len(legal), "submissions_given": len(results), "cap": cap,
        "over_cap": [r.name for r in results[cap:]],
        "submissions": [{"file": r.name, "total": r.total, "compiled": r.compiled, "subtasks": r.subtasks,
                         "tests": {t: v.__dict__ for t, v in r.tests.items()}, "compile_log": r.compile_log} for r in results],
        "judge": judge.describe(),
        "year": year, "medal_cutoffs": cut,  # contest totals over six tasks (ioi_contest_report.contest_report compares)
    }
    (out / "submissions").mkdir(exist_ok=True)
    for sub in res["submissions"]:
        (out / "submissions" / f"{sub['file']}.json").write_text(json.dumps(sub, indent=2))
    (out / "results.json").write_text(json.dumps(res, indent=2))
    return res


def _icpc_submissions(root: Path, problems: list[str]) -> list:
    from recipe.eval.olympiad.icpc import ICPCCandidate
    from recipe.eval.olympiad.ioi import extract_cpp
    cands = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root)
        prob = rel.parts[0] if len(rel.parts) > 1 else f.name.split("_", 1)[0]
        if prob not in problems:
            raise ValueError(f"{f}: problem {prob!r} not among the packages {problems}")
        cands.append(ICPCCandidate(prob, str(rel), extract_cpp(f.read_text(errors="replace"))))
    return cands


def score_icpc(args: ScoreOptions, out: Path, cfg) -> dict:
    from recipe.eval.olympiad.icpc import ICPCJudge, load_kattis, simulate_contest
    _need(args, "problems", "submissions")
    pkgs = {d.name: load_kattis(d) for d in sorted(Path(args.problems).iterdir()) if (d / "problem.yaml").is_file()}
    if not pkgs:
        raise ValueError(f"{args.problems}: no Kattis packages (folders with problem.yaml)")
    judges: dict = {}
    c = cfg.icpc
    res = simulate_contest(_icpc_submissions(Path(args.submissions), list(pkgs)),
                           lambda p: judges.setdefault(p, ICPCJudge(pkgs[p])),
                           max_submissions_per_problem=c.max_submissions_per_problem,
                           minutes_per_submission=c.minutes_per_submission, require_samples=c.require_samples,
                           penalty_minutes=c.penalty_minutes, compile_error_penalty=c.compile_error_penalty)
    res = {"suite": "icpc", "problems": list(pkgs), "policy": c.model_dump()} | res
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=2))
    return res


def score_imo_answer(args: ScoreOptions, responses: str | None, out: Path, cfg) -> dict:
    from recipe.eval.olympiad.imo.imo_answer import JUDGE_FIELDS, load_answerbench, score_answerbench
    from recipe.eval.olympiad.judge_prompts import load_prompt
    _need(args, "data", "judge_prompt")
    c = cfg.imo_answer
    bench = load_answerbench(args.data, args.version or c.version, on_malformed=c.on_malformed)
    grouped: dict[str, list] = {}
    modes: dict[str, list] = {}
    default = default_thinking(args)
    for row in _read_responses(responses):
        resp, mode = unless_unfinished(row, row["response"], row_thinking(row, default))
        grouped.setdefault(str(row["Problem ID"]), []).append(resp)
        modes.setdefault(str(row["Problem ID"]), []).append(mode)
    judge = _LazyJudge(args.judge_endpoint, args.judge_model or c.judge_model, args.judge_api_key_env, c.judge.model_dump(),
                       args.judge_server)
    res = score_answerbench(bench, grouped, judge, load_prompt(args.judge_prompt, JUDGE_FIELDS),
                            thinking=default, modes=modes, precheck=c.precheck)
    res["thinking"] = {None: "auto", True: "on", False: "off"}[default]
    res["judge"] = judge.describe()
    _write(out, res)
    return res


def score_imo_proof(args: ScoreOptions, responses: str | None, out: Path, cfg) -> dict:
    from recipe.eval.olympiad.imo.imo_proof import JUDGE_FIELDS, load_proofbench, score_proofbench
    from recipe.eval.olympiad.judge_prompts import load_prompt
    _need(args, "data", "judge_prompt")
    c = cfg.imo_proof
    rows = load_proofbench(args.data, args.version or c.version)
    proofs = {}
    for row in _read_responses(responses):
        if str(row["Problem ID"]) in proofs:
            raise ValueError(f"two final proofs for {row['Problem ID']}: give one per problem")
        mode = False if row.get("thinking") is False else default_thinking(args)
        proofs[str(row["Problem ID"])] = unless_unfinished(row, as_response(row), mode)[0]
    judge = _LazyJudge(args.judge_endpoint, args.judge_model or c.judge_model, args.judge_api_key_env, c.judge.model_dump(),
                       args.judge_server)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.jsonl", "w") as f:  # every proof and every grade, as they come
        res = score_proofbench(rows, proofs, judge, load_prompt(args.judge_prompt, JUDGE_FIELDS),
                               samples=args.samples or c.judge_samples, aggregation=args.aggregation or c.aggregation,
                               invalid_grade=c.invalid_grade, thinking=default_thinking(args),
                               on_item=lambda it: (f.write(json.dumps(it) + "\n"), f.flush()))
    res["judge"] = judge.describe()
    _write(out, res)
    return res


def _write(out: Path, res: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    items = res.pop("items")
    with open(out / "items.jsonl", "w") as f:
        for it in items:
            f.write(json.dumps(it) + "\n")
    (out / "results.json").write_text(json.dumps(res, indent=2))


def run_score(suite: str, args: ScoreOptions, *, out: str | Path, responses: str | Path | None = None) -> dict:
    """Entry point used by ``recipe eval score``; returns the summary (without per-item lists)."""
    if suite not in SUITES:
        raise ValueError(f"not an olympiad suite: {suite!r} (olympiad suites: {', '.join(SUITES)})")
    from recipe.config import load_config
    cfg = load_config(args.profile).olympiad
    out = Path(out)
    if suite == "ioi":
        res = score_ioi(args, out, cfg)
        if res["mode"] == "select":
            return {k: v for k, v in res.items() if k != "submission_results"}
        return {k: v for k, v in res.items() if k != "submissions"} | {
            "submissions": {s["file"]: {"total": s["total"], "subtasks": {k: v["score"] for k, v in s["subtasks"].items()}}
                            for s in res["submissions"]}}
    if suite == "icpc":
        res = score_icpc(args, out, cfg)
        return {k: v for k, v in res.items() if k != "log"}
    fn = score_imo_answer if suite == "imo-answer" else score_imo_proof
    return fn(args, str(responses) if responses else None, out, cfg)
